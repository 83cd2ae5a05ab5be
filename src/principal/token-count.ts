import { estimateSchemaTokens } from '../policy/escalation.js'

/**
 * The one token counter of myc's reports (`myc tokens`, `myc preview skill`;
 * docs/tokens.md): characters of the JSON a model receives, divided by 4 and
 * rounded up. An estimate, not a tokenizer: Anthropic publishes no tokenizer
 * of current Claude models for offline use (npm's @anthropic-ai/tokenizer is
 * for models before Claude 3), and the ratio between two lists (what the
 * reports compare) depends little on the exact rule.
 */
export const TOKEN_COUNTER = 'JSON characters / 4, rounded up'

/** Estimated tokens of tool definitions as a client receives them (the `tools` of a tools/list answer). */
export function toolTokens(tools: Iterable<unknown>): number {
  return estimateSchemaTokens(tools)
}

/** Estimated tokens of a text (a system prompt): its characters / 4, rounded up. */
export function textTokens(text: string): number {
  return Math.ceil(text.length / 4)
}
