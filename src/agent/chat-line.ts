import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { costUsd } from './classifier.js'
import type { TokenUsage } from './events.js'

/** The chat's line: the status shown after each turn, and the prompt history kept between chats. */

/**
 * The chat's status line: role, model, active skills (policy mode), tokens
 * in (cache reads and writes included) and out so far, and the cost when
 * `agent.price` is set. `developer · claude-x · skills: common, reader · 1.2k in / 340 out · $0.01`
 */
export function statusLine(
  principal: { role: string | null; activeSkills: ReadonlyArray<{ name: string }> },
  policyMode: boolean,
  model: string,
  usage: TokenUsage,
  price: Parameters<typeof costUsd>[1],
  cap?: string,
): string {
  const tokensIn = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens
  const cost = costUsd(usage, price)
  return [
    principal.role ?? 'open mode',
    model,
    ...(policyMode ? [`skills: ${principal.activeSkills.map((s) => s.name).join(', ') || 'none'}`] : []),
    `${compactCount(tokensIn)} in / ${compactCount(usage.outputTokens)} out`,
    ...(cost === undefined ? [] : [`$${cost === 0 ? '0' : cost < 0.01 ? cost.toFixed(4) : cost.toFixed(2)}`]),
    ...(cap === undefined ? [] : [cap]),
  ].join(' · ')
}

/** 340, 1.2k, 56k, 3.4M: one decimal below 10 of a unit, none above. */
export function compactCount(n: number): string {
  if (n < 1_000) return String(n)
  // 999,600 reads 1M, not 1000k.
  const [value, unit] = n < 999_500 ? [n / 1_000, 'k'] : [n / 1_000_000, 'M']
  return `${value < 9.95 ? value.toFixed(1).replace(/\.0$/, '') : Math.round(value)}${unit}`
}

export const HISTORY_LINES = 1_000

/** The history file, newest first (as readline keeps it); none when it cannot be read. */
export function readHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).reverse().slice(0, HISTORY_LINES)
  } catch {
    return []
  }
}

/** Writes the history back, oldest first, capped; a failure to write is not worth failing the chat. */
export function writeHistory(file: string, newestFirst: readonly string[]): void {
  try {
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, `${[...newestFirst].slice(0, HISTORY_LINES).reverse().join('\n')}\n`)
  } catch {
    // History is a convenience: a home that cannot be written loses it, never the chat.
  }
}
