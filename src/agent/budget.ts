import type { BudgetConfig, MyceliumConfig } from '../config/schema.js'
import { MycError } from '../errors.js'
import { costUsd } from './classifier.js'
import type { TokenUsage } from './events.js'

/**
 * Budgets: caps on what an agent run spends (docs/tokens.md, "Capping the
 * spend"). Every Messages API request of a run goes through one Budget: the
 * agent's turns, its workers' and its answers to children's sampling (and
 * chat's /compress). The rule, before each request:
 *
 *   spent so far + the request's estimate > a cap  →  the request is not sent
 *
 * where the estimate is the request's input (the characters of the JSON of
 * its system prompt, messages and tools, divided by 4, priced as the dearer
 * of input and cache writes) plus its `max_tokens` as the worst-case output.
 * Since every estimate is above 0, no request starts once the spend has
 * reached a cap; the output part is exact (the API never writes more than
 * `max_tokens`), the input part an estimate. Once a request is refused,
 * every later one is refused too, until the caps change (chat's /budget).
 */

export type Price = MyceliumConfig['agent']['price']

/** The caps of one run; absent means no cap of that kind. */
export interface BudgetLimits extends BudgetConfig {
  /** Input and output tokens together (`--max-tokens-total`). */
  maxTotalTokens?: number | undefined
}

/** The caps given on the command line, which win over the config's. */
export interface BudgetFlags {
  maxUsd?: number | undefined
  maxTotalTokens?: number | undefined
}

/** The usage of one Messages API answer, as the API reports it. */
type ApiUsage = {
  input_tokens?: number | null
  output_tokens?: number | null
  cache_read_input_tokens?: number | null
  cache_creation_input_tokens?: number | null
}

/** Estimated tokens of what a request sends: the characters of its JSON divided by 4, rounded up (the rule of src/principal/token-count.ts). */
export function estimateTokens(value: unknown): number {
  return Math.ceil((JSON.stringify(value) ?? '').length / 4)
}

/**
 * The caps of a run, cap by cap: a command-line flag, else the nearest role
 * of the chain (the role, then the role it inherits from…) that sets it, else
 * `agent.budget`. A USD cap without `agent.price` is a usage error naming
 * where the cap came from.
 */
export function resolveLimits(
  flags: BudgetFlags,
  agent: BudgetConfig | undefined,
  roles: ReadonlyArray<{ name: string; budget?: BudgetConfig | undefined }>,
  price: Price,
): BudgetLimits {
  const limits: BudgetLimits = {}
  const from = new Map<keyof BudgetLimits, string>()
  for (const key of ['maxUsd', 'maxInputTokens', 'maxOutputTokens'] as const) {
    const role = roles.find((r) => r.budget?.[key] !== undefined)
    const value = role ? role.budget![key] : agent?.[key]
    if (value === undefined) continue
    limits[key] = value
    from.set(key, role ? `the budget of role "${role.name}" (budget.${key})` : `agent.budget.${key}`)
  }
  if (flags.maxUsd !== undefined) {
    limits.maxUsd = flags.maxUsd
    from.set('maxUsd', '--max-budget-usd')
  }
  if (flags.maxTotalTokens !== undefined) limits.maxTotalTokens = flags.maxTotalTokens
  if (limits.maxUsd !== undefined && !price)
    throw new MycError(
      'usage',
      `${from.get('maxUsd')} caps the spend in USD, and there is no price to count it with: set agent.price ({ "inputPerMTok": …, "outputPerMTok": … }, USD per million tokens) in the config, or cap tokens instead (--max-tokens-total, budget.maxInputTokens, budget.maxOutputTokens)`,
    )
  return limits
}

/** USD for a person: up to four significant digits. */
function usdText(n: number): string {
  return `$${n === 0 ? '0' : Number(n.toPrecision(4))}`
}

/** The caps in a few words (`budget $0.05, 10000 tokens`), for chat's status line; undefined without caps. */
export function capText(limits: BudgetLimits): string | undefined {
  const parts = [
    ...(limits.maxUsd !== undefined ? [usdText(limits.maxUsd)] : []),
    ...(limits.maxTotalTokens !== undefined ? [`${limits.maxTotalTokens} tokens`] : []),
    ...(limits.maxInputTokens !== undefined ? [`${limits.maxInputTokens} in`] : []),
    ...(limits.maxOutputTokens !== undefined ? [`${limits.maxOutputTokens} out`] : []),
  ]
  return parts.length > 0 ? `budget ${parts.join(', ')}` : undefined
}

const zero = (): TokenUsage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
})
const inputOf = (u: TokenUsage) => u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens

/** The budget stopped a request: the message says what was spent, the cap, and how to raise it. */
export class BudgetReached extends Error {
  readonly code = 'budget_reached'
}

/** One run's meter and caps (see the top of this file for the rule). */
export class Budget {
  /** Everything this run's requests used, each answer counted once. */
  readonly spent: TokenUsage = zero()
  private limitsNow: BudgetLimits = {}
  private refused: string | undefined
  private recorded: TokenUsage = zero()

  /** `raise`: how a person raises the budget where this run runs (a flag, or chat's /budget). */
  constructor(
    private readonly price: Price,
    private readonly raise: string,
  ) {}

  get limits(): BudgetLimits {
    return this.limitsNow
  }

  /** Whether any cap is set (without one, no request is estimated: the JSON of a long conversation is not made for nothing). */
  get capped(): boolean {
    return Object.values(this.limitsNow).some((v) => v !== undefined)
  }

  /** New caps (a run's role, or chat's /budget): requests may start again if they fit. */
  setLimits(limits: BudgetLimits): void {
    this.limitsNow = { ...limits }
    this.refused = undefined
  }

  /** Counts one API answer's usage. */
  add(usage: ApiUsage | undefined): void {
    if (!usage) return
    this.spent.inputTokens += usage.input_tokens ?? 0
    this.spent.outputTokens += usage.output_tokens ?? 0
    this.spent.cacheReadInputTokens += usage.cache_read_input_tokens ?? 0
    this.spent.cacheCreationInputTokens += usage.cache_creation_input_tokens ?? 0
  }

  /** The cost so far, when a price is set. */
  costUsd(): number | undefined {
    return costUsd(this.spent, this.price)
  }

  /**
   * Why a request of `input` estimated tokens and at most `output` tokens of
   * answer may not start (one line: what was spent, the cap, how to raise
   * it), or undefined when it fits under every cap.
   */
  refuse(input: number, output: number): string | undefined {
    if (this.refused !== undefined) return this.refused
    const l = this.limitsNow
    const spentIn = inputOf(this.spent)
    const over: string[] = []
    if (l.maxUsd !== undefined && this.price) {
      const spent = this.costUsd() ?? 0
      const next =
        (input * Math.max(this.price.inputPerMTok, this.price.cacheWritePerMTok ?? 0) +
          output * this.price.outputPerMTok) /
        1_000_000
      if (spent + next > l.maxUsd)
        over.push(
          `spent ${usdText(spent)} of the ${usdText(l.maxUsd)} cap, and the next request could cost up to ${usdText(next)}`,
        )
    }
    if (l.maxTotalTokens !== undefined && spentIn + this.spent.outputTokens + input + output > l.maxTotalTokens)
      over.push(
        `spent ${spentIn + this.spent.outputTokens} tokens of the ${l.maxTotalTokens}-token cap, and the next request could take up to ${input + output}`,
      )
    if (l.maxInputTokens !== undefined && spentIn + input > l.maxInputTokens)
      over.push(
        `spent ${spentIn} input tokens of the ${l.maxInputTokens} cap, and the next request sends about ${input}`,
      )
    if (l.maxOutputTokens !== undefined && this.spent.outputTokens + output > l.maxOutputTokens)
      over.push(
        `spent ${this.spent.outputTokens} output tokens of the ${l.maxOutputTokens} cap, and the next request may write up to ${output}`,
      )
    if (over.length === 0) return undefined
    this.refused = `budget reached: ${over[0]} (${this.raise})`
    return this.refused
  }

  /** A request sent at once (not streamed): refused with {@link BudgetReached} when it does not fit; its usage counted when it does. */
  async send<Q extends { max_tokens: number }, R extends { usage?: ApiUsage | undefined }>(
    request: Q,
    call: (request: Q) => Promise<R>,
  ): Promise<R> {
    const { max_tokens, ...sent } = request
    const refused = this.capped ? this.refuse(estimateTokens(sent), max_tokens) : undefined
    if (refused !== undefined) throw new BudgetReached(refused)
    const reply = await call(request)
    this.add(reply.usage)
    return reply
  }

  /** What was spent since the last call: a chat record's `usage` entry for the turn just recorded. */
  unrecorded(): TokenUsage {
    const out = zero()
    for (const k of Object.keys(out) as Array<keyof TokenUsage>) out[k] = this.spent[k] - this.recorded[k]
    this.recorded = { ...this.spent }
    return out
  }

  /** A chat record's `usage` entry for what was spent since the last one: tokens, and the cost when a price is set. */
  usageRecord(): {
    type: 'usage'
    inputTokens: number
    outputTokens: number
    cacheReadInputTokens: number
    cacheCreationInputTokens: number
    costUsd?: number
  } {
    const usage = this.unrecorded()
    const cost = costUsd(usage, this.price)
    return { type: 'usage', ...usage, ...(cost !== undefined ? { costUsd: cost } : {}) }
  }
}

/**
 * Chat's `/budget [N | N tokens | off]`: without an argument, the spend and
 * the caps; `N` makes the caps one of N USD (needs agent.price), `N tokens`
 * one of N tokens in and out together, `off` none: for the rest of the
 * chat, in place of the caps set before. Answers the line to show.
 */
export function budgetCommand(budget: Budget, arg: string): string {
  const spent = `spent ${budget.spent.inputTokens + budget.spent.cacheReadInputTokens + budget.spent.cacheCreationInputTokens + budget.spent.outputTokens} tokens${budget.costUsd() !== undefined ? `, ${usdText(budget.costUsd()!)}` : ''}`
  const words = arg.trim().toLowerCase().split(/\s+/).filter(Boolean)
  if (words.length === 0)
    return `${spent}; ${capText(budget.limits) ?? 'no budget'} (/budget N sets one in USD, /budget N tokens in tokens, /budget off removes it)`
  if (words.length === 1 && words[0] === 'off') {
    budget.setLimits({})
    return `${spent}; no budget for the rest of this chat`
  }
  const n = Number(words[0]!.replace(/^\$/, ''))
  const tokens = words[1] === 'tokens' && words.length === 2
  if (!Number.isFinite(n) || n <= 0 || (words.length > 1 && !tokens) || (tokens && !Number.isSafeInteger(n)))
    return `/budget takes an amount of USD (/budget 0.50), a number of tokens (/budget 20000 tokens) or off, not "${arg.trim()}"`
  if (!tokens && budget.costUsd() === undefined)
    return `/budget ${words[0]}: a budget in USD needs agent.price in the config; /budget ${words[0]} tokens caps tokens instead`
  budget.setLimits(tokens ? { maxTotalTokens: n } : { maxUsd: n })
  return `${spent}; ${capText(budget.limits)!} for the rest of this chat`
}
