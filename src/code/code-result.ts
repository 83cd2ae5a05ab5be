import type { CodeCacheUse, RunEnd } from './protocol.js'

/** A tool result as much as code mode reads of it. */
interface ToolResult {
  content?: unknown
  structuredContent?: unknown
  isError?: unknown
}

/** An inner call's answer as the code sees it: a value, or the message of the Error it throws. */
export type InnerAnswer = { ok: true; value: unknown } | { ok: false; message: string }

/** How a run ended, on myc's side. */
export type RunOutcome =
  | ({ kind: 'done'; output: string; truncated: boolean; codeCache?: CodeCacheUse } & RunEnd)
  /** A limit myc enforced: the time, or the runner's own output over what one line may carry. */
  | { kind: 'limit'; limit: 'time' | 'output' | 'memory' }
  /** The runner did not start, or ended without an answer. */
  | { kind: 'failed'; message: string }

/** The limits a result names. */
export interface CodeLimits {
  timeoutMs: number
  memoryMb: number
  maxOutputBytes: number
}

/** The text of a result's text content, joined by newlines. */
function resultText(result: ToolResult): string {
  const content = Array.isArray(result.content) ? (result.content as Array<{ type?: unknown; text?: unknown }>) : []
  return content
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text as string)
    .join('\n')
}

/**
 * What an inner call gives the code (docs/code-mode.md): the structured
 * content when there is some, else the text; a tool error, a protocol error
 * (the unknown-tool answer included, word for word) or a cancelled call is
 * an Error with that text.
 */
export function innerAnswer(
  outcome: { ok: true; result: ToolResult } | { ok: false; error: { message: string } } | undefined,
): InnerAnswer {
  if (!outcome) return { ok: false, message: 'The call was cancelled.' }
  if (!outcome.ok) return { ok: false, message: outcome.error.message }
  const { result } = outcome
  if (result.isError === true) return { ok: false, message: resultText(result) || 'The tool failed and said nothing.' }
  const structured = result.structuredContent
  if (typeof structured === 'object' && structured !== null) return { ok: true, value: structured }
  return { ok: true, value: resultText(result) }
}

/** `text` cut to `bytes` bytes of UTF-8 (never in the middle of a character). */
function cutBytes(text: string, bytes: number): { text: string; cut: boolean } {
  const buffer = Buffer.from(text, 'utf8')
  if (buffer.length <= bytes) return { text, cut: false }
  return {
    text: buffer
      .subarray(0, Math.max(0, bytes))
      .toString('utf8')
      .replace(/\uFFFD+$/, ''),
    cut: true,
  }
}

/** The line a cut output ends with. */
function cutLine(limits: CodeLimits): string {
  return `[myc: the output was cut at codeMode.maxOutputBytes, ${limits.maxOutputBytes} bytes]`
}

/** Why a run stopped at a limit, in the words of its result. */
function limitText(limit: 'time' | 'output' | 'memory', limits: CodeLimits): string {
  switch (limit) {
    case 'time':
      return `The run stopped at the time limit (codeMode.timeoutMs, ${limits.timeoutMs} ms): it was ended with everything it ran.`
    case 'memory':
      return `The run stopped at the memory limit (codeMode.memoryMb, ${limits.memoryMb} MB).`
    case 'output':
      return `The run stopped at the output limit: it wrote more at once than myc reads from a run (codeMode.maxOutputBytes, ${limits.maxOutputBytes} bytes, sets it).`
  }
}

/**
 * The one text content of run_code's result: the console output, then the
 * returned value as JSON, cut at `maxOutputBytes` with a line saying so; an
 * exception or a limit is `isError` with its message after the output.
 */
export function runResult(
  outcome: RunOutcome,
  limits: CodeLimits,
): { content: Array<{ type: 'text'; text: string }>; isError?: true } {
  const text = (parts: string[], isError: boolean) => ({
    content: [{ type: 'text' as const, text: parts.filter((p) => p !== '').join('\n') || '(no output)' }],
    ...(isError ? { isError: true as const } : {}),
  })
  if (outcome.kind === 'limit') return text([limitText(outcome.limit, limits)], true)
  if (outcome.kind === 'failed') return text([`The run could not complete: ${outcome.message}`], true)
  const output = outcome.output.replace(/\n$/, '')
  const shown = [output, ...(outcome.truncated ? [cutLine(limits)] : [])]
  if (!outcome.ok) return text([...shown, 'limit' in outcome ? limitText(outcome.limit, limits) : outcome.error], true)
  if (outcome.value === undefined || outcome.truncated) return text(shown, false)
  const room = limits.maxOutputBytes - Buffer.byteLength(output, 'utf8')
  const value = cutBytes(outcome.value, room)
  return text([output, value.text, ...(value.cut ? [cutLine(limits)] : [])], false)
}
