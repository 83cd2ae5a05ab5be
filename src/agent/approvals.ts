import type { MyceliumConfig } from '../config/schema.js'
import { usageError } from '../errors.js'
import type { Runtime } from '../runtime/runtime.js'
import { decideApproval, riskRank, RISK_LEVELS, type Preapproval, type RiskClassifier, type RiskLevel } from './risk.js'
import type { CallApprovals, OfferedTool } from './tool-call.js'
import type { AgentEventBody } from './events.js'
import { parsePattern, type PatternContext } from '../policy/patterns.js'

import type { AskPerson } from './terminal-approval.js'

/** Parses `--approve` values: a risk level, or a tool pattern (`fs:write_*`, `fs__write_file`). */
function parsePreapprovals(values: readonly string[], context: PatternContext): Preapproval[] {
  return values.map((value) => {
    if ((RISK_LEVELS as readonly string[]).includes(value)) return { level: value as RiskLevel }
    const parsed = parsePattern(value, context)
    if (!parsed.ok)
      throw usageError(`--approve takes a risk level (${RISK_LEVELS.join(', ')}) or a tool pattern: ${parsed.error}`)
    return { pattern: parsed.pattern }
  })
}

/**
 * Approvals for one agent run or chat, decided before a call is sent: the
 * tool's risk against the threshold, then what was answered earlier
 * (always / never hold for the run or chat), `--approve`, and last a person on
 * the terminal, asked one call at a time. Without a terminal nothing waits:
 * the call is denied and the model is told so.
 */
export class ApprovalGate implements CallApprovals {
  private readonly always = new Set<string>()
  private readonly never = new Set<string>()
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly options: {
      classifier: RiskClassifier
      threshold: RiskLevel
      preapproved: readonly Preapproval[]
      ask?: AskPerson | undefined
      emit: (event: AgentEventBody) => void
    },
  ) {}

  /** Whether the call may run; emits the approval events when the risk reaches the threshold. */
  async check(
    callId: string,
    tool: OfferedTool,
    input: Record<string, unknown>,
  ): Promise<{ allow: true } | { allow: false; reason: string }> {
    const split = tool.id.indexOf(':')
    const server = tool.id.slice(0, split)
    const name = tool.id.slice(split + 1)
    const { level } = this.options.classifier.classify(server, name, tool.def.annotations)
    if (riskRank(level) < riskRank(this.options.threshold) && !this.never.has(tool.id)) return { allow: true }
    const { emit } = this.options
    emit({ type: 'approval_requested', id: callId, tool: tool.id, risk: level })
    const decision = decideApproval({
      id: tool.id,
      server,
      tool: name,
      level,
      threshold: this.options.threshold,
      memory: { always: this.always, never: this.never },
      preapproved: this.options.preapproved,
      interactive: this.options.ask !== undefined,
    })
    if (decision.action !== 'ask') {
      // Below the threshold nothing was asked (only reached here for a "never" tool, which is denied by session).
      const by = decision.by === 'threshold' ? 'session' : decision.by
      emit({
        type: 'approval_decided',
        id: callId,
        tool: tool.id,
        risk: level,
        decision: decision.action,
        by,
        reason: decision.why,
      })
      return decision.action === 'allow' ? { allow: true } : { allow: false, reason: `not approved: ${decision.why}` }
    }
    // One prompt at a time, even if calls come in parallel.
    const answer = await (this.queue = this.queue.then(() => this.options.ask!({ tool: tool.id, risk: level, input })))
    if (answer === 'always') this.always.add(tool.id)
    if (answer === 'never') this.never.add(tool.id)
    const allow = answer === 'yes' || answer === 'always'
    // Ctrl-C at the question is no answer: the call is not run, and it is recorded as cancelled, not as a "no".
    const reason = answer === 'cancelled' ? 'cancelled: the user pressed Ctrl-C at the question' : `answered ${answer}`
    emit({
      type: 'approval_decided',
      id: callId,
      tool: tool.id,
      risk: level,
      decision: allow ? 'allow' : 'deny',
      by: 'user',
      reason,
    })
    if (allow) return { allow: true }
    return {
      allow: false,
      reason: answer === 'cancelled' ? `not approved: ${reason}` : `not approved: the user answered ${answer}`,
    }
  }
}

/** How `--approve`'s tool patterns are read: the config's separator and its children's keys. */
function patternContext(config: MyceliumConfig, runtime: Pick<Runtime, 'supervisor'>): PatternContext {
  return {
    separator: config.namespace.separator,
    servers: new Set([...runtime.supervisor.children.keys(), 'mycelium']),
  }
}

/** `--approve`'s values checked before any child starts: a typo is a usage error, never one after the start-up. */
export function checkPreapprovals(
  config: MyceliumConfig,
  runtime: Pick<Runtime, 'supervisor'>,
  approve: readonly string[],
): void {
  parsePreapprovals(approve, patternContext(config, runtime))
}

/**
 * The approval gate of a run: risk from the config's rules, built-ins,
 * annotations and names; `--approve` values; asking through `ask` (the
 * chat's own prompt), else on the terminal when there is one, else nobody.
 */
export async function createApprovalGate(
  config: MyceliumConfig,
  runtime: Pick<Runtime, 'supervisor'>,
  approve: readonly string[],
  emit: (event: AgentEventBody) => void,
  ask?: AskPerson,
): Promise<ApprovalGate> {
  const { RiskClassifier } = await import('./risk.js')
  const context = patternContext(config, runtime)
  const preapproved = parsePreapprovals(approve, context)
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true
  const terminal = interactive ? (await import('./terminal-approval.js')).askOnTerminal : undefined
  return new ApprovalGate({
    classifier: new RiskClassifier(config.agent.risk, context),
    threshold: config.agent.approvalThreshold,
    preapproved,
    ask: ask ?? terminal,
    emit,
  })
}
