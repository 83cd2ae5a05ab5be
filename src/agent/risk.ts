import type { ToolAnnotations } from '@modelcontextprotocol/client'
import { parsePattern, patternMatches, type PatternContext, type ToolPattern } from '../policy/patterns.js'

/** How much a tool call can hurt, lowest first. */
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const
export type RiskLevel = (typeof RISK_LEVELS)[number]

export const riskRank = (level: RiskLevel): number => RISK_LEVELS.indexOf(level)

/** Where a tool's risk came from (for the approval prompt and the event). */
export type RiskSource = 'config' | 'builtin' | 'annotations' | 'name'

/** A configured override: tools matching `pattern` have `level` (config `agent.risk`). */
export interface RiskRule {
  pattern: string
  level: RiskLevel
}

// The fallback table, by whole words of the tool's name (seed 000's table, a few synonyms added).
const NAME_WORDS: ReadonlyArray<[ReadonlySet<string>, RiskLevel]> = [
  [new Set(['exec', 'execute', 'shell', 'bash', 'sh', 'zsh', 'terminal', 'powershell', 'cmd']), 'critical'],
  [
    new Set([
      'write',
      'edit',
      'delete',
      'remove',
      'rm',
      'move',
      'mv',
      'rename',
      'drop',
      'truncate',
      'sql',
      'database',
      'db',
      'kill',
      'overwrite',
      'destroy',
      'purge',
      'wipe',
    ]),
    'high',
  ],
  [
    new Set([
      'http',
      'https',
      'fetch',
      'request',
      'url',
      'download',
      'upload',
      'web',
      'browse',
      'curl',
      'post',
      'send',
    ]),
    'medium',
  ],
]

/** `write_file`, `writeFile`, `write-file`, `Write.File` → write, file. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase())
}

const CRITICAL_BUILTINS = new Set(['exec', 'run_script'])

/**
 * Classifies tools by risk: a configured rule first (they win), then
 * myc's own built-ins (`mycelium:exec` and `run_script` are critical), then
 * the MCP annotations the server gave (`destructiveHint` → high,
 * `openWorldHint` → medium, `readOnlyHint` → low), then words in the
 * name. Pure: patterns are compiled once.
 */
export class RiskClassifier {
  private readonly rules: Array<{ pattern: ToolPattern; level: RiskLevel }>

  constructor(rules: readonly RiskRule[], context: PatternContext) {
    this.rules = rules.map((r) => {
      const parsed = parsePattern(r.pattern, context)
      if (!parsed.ok) throw new Error(`agent.risk: ${parsed.error}`)
      return { pattern: parsed.pattern, level: r.level }
    })
  }

  classify(server: string, tool: string, annotations?: ToolAnnotations): { level: RiskLevel; source: RiskSource } {
    // The highest configured level among the rules that match.
    let configured: RiskLevel | undefined
    for (const rule of this.rules)
      if (
        patternMatches(rule.pattern, server, tool) &&
        (configured === undefined || riskRank(rule.level) > riskRank(configured))
      )
        configured = rule.level
    if (configured) return { level: configured, source: 'config' }
    if (server === 'mycelium') return { level: CRITICAL_BUILTINS.has(tool) ? 'critical' : 'low', source: 'builtin' }
    if (annotations?.destructiveHint === true) return { level: 'high', source: 'annotations' }
    if (annotations?.openWorldHint === true) return { level: 'medium', source: 'annotations' }
    if (annotations?.readOnlyHint === true) return { level: 'low', source: 'annotations' }
    const parts = words(tool)
    for (const [set, level] of NAME_WORDS) if (parts.some((w) => set.has(w))) return { level, source: 'name' }
    return { level: 'low', source: 'name' }
  }
}

/** What the person (or `--approve`) has said so far in this run or chat (decided `by: "session"`). */
export interface ApprovalMemory {
  /** `always` answers, by canonical id. */
  always: ReadonlySet<string>
  /** `never` answers, by canonical id. */
  never: ReadonlySet<string>
}

/** One `--approve` value: a risk level (that and below) or a tool pattern. */
export type Preapproval = { level: RiskLevel } | { pattern: ToolPattern }

/** Who decided: the threshold, an earlier always/never, --approve, or nobody being there to ask. */
type DecidedBy = 'threshold' | 'session' | 'preapproved' | 'no_terminal'
export type ApprovalDecision = { action: 'allow' | 'deny'; by: DecidedBy; why: string } | { action: 'ask' }

/**
 * Whether a call may run, before it is sent: below the threshold it runs;
 * at or above it, a remembered answer or a pre-approval decides, else a
 * person is asked, and without a terminal nothing waits: it is denied.
 */
export function decideApproval(input: {
  id: string
  server: string
  tool: string
  level: RiskLevel
  threshold: RiskLevel
  memory: ApprovalMemory
  preapproved: readonly Preapproval[]
  interactive: boolean
}): ApprovalDecision {
  if (input.memory.never.has(input.id)) return { action: 'deny', by: 'session', why: 'never approved in this session' }
  if (riskRank(input.level) < riskRank(input.threshold))
    return {
      action: 'allow',
      by: 'threshold',
      why: `${input.level} risk, below the approval threshold (${input.threshold})`,
    }
  if (input.memory.always.has(input.id))
    return { action: 'allow', by: 'session', why: 'always approved in this session' }
  for (const p of input.preapproved) {
    if ('level' in p ? riskRank(input.level) <= riskRank(p.level) : patternMatches(p.pattern, input.server, input.tool))
      return { action: 'allow', by: 'preapproved', why: 'pre-approved (--approve)' }
  }
  if (!input.interactive)
    return {
      action: 'deny',
      by: 'no_terminal',
      why: `${input.level} risk needs approval and there is no terminal to ask (pass --approve ${input.level} or --approve ${input.id})`,
    }
  return { action: 'ask' }
}
