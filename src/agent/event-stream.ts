import { randomUUID } from 'node:crypto'
import type { Writable } from 'node:stream'
import { terminalMarkdown } from '../terminal-markdown.js'
import { useColour, type ColourEnv } from '../terminal-colour.js'
import { jsonText, terminalText, terminalTextStream } from '../terminal-text.js'
import type { AgentEvent, AgentEventBody } from './events.js'
import { countOf } from '../words.js'

/**
 * Stamps events (seq, time, and the chat's id as `sessionId`) and hands each to its sinks: the
 * JSON Lines stream on stdout (`--json`), or the human rendering (text on
 * stdout, tool activity on stderr).
 */
export class EventStream {
  /** The id of the chat record the events belong to (their `sessionId`); set again when a run continues one or hands off. */
  chatId: string
  private seq = 0

  constructor(
    private readonly sink: (event: AgentEvent) => void,
    chatId: string = randomUUID(),
  ) {
    this.chatId = chatId
  }

  emit = (body: AgentEventBody): void => {
    this.sink({ ...body, seq: ++this.seq, time: new Date().toISOString(), sessionId: this.chatId } as AgentEvent)
  }
}

/** One JSON object per line: nothing else ever goes to this stream. The exact text, every control character JSON-escaped. */
export function jsonLinesSink(out: Writable): (event: AgentEvent) => void {
  return (event) => {
    out.write(`${jsonText(event)}\n`)
  }
}

/**
 * For people: the assistant's text on stdout, tool calls and status on
 * stderr. Text deltas, when asked for, are written as they come and the
 * finished block is then not written again. With `markdown` (stdout is a
 * terminal) the text is shown as Markdown reads ({@link terminalMarkdown}:
 * line by line, in colour when `markdown.colour`); else as it is. What the
 * model, tools and children wrote goes through {@link terminalText}:
 * control characters are shown, never obeyed.
 */
export function humanSink(
  out: Writable,
  err: Writable,
  options: { markdown?: { colour: boolean } } = {},
): (event: AgentEvent) => void {
  let streamed = false
  const newStream = () => (options.markdown ? terminalMarkdown(options.markdown) : terminalTextStream())
  let stream = newStream()
  const line = (text: string) => err.write(`${terminalText(text)}\n`)
  /** Calls refused before they ran: their line says why, and their empty result is not shown again. */
  const refused = new Set<string>()
  return (event) => {
    switch (event.type) {
      case 'approval_decided':
        if (event.decision === 'deny') {
          refused.add(event.id)
          line(`✗ ${event.tool} refused: ${event.reason}`)
        }
        return
      case 'text_delta':
        streamed = true
        out.write(stream.write(event.text))
        return
      case 'text': {
        const text = streamed ? stream.end() : stream.write(event.text) + stream.end()
        out.write(streamed ? `${text}\n` : text.endsWith('\n') ? text : `${text}\n`)
        streamed = false
        stream = newStream()
        return
      }
      // A call a run_code call's code made is indented under that call.
      case 'tool_call':
        line(`${event.parentId ? '  ' : ''}→ ${event.tool} ${jsonText(event.input).slice(0, 200)}`)
        return
      case 'tool_result':
        if (!refused.delete(event.id))
          line(`${event.parentId ? '  ' : ''}${event.ok ? '✓' : '✗'} ${event.tool} (${event.durationMs} ms)`)
        return
      case 'skill_activated':
      case 'skill_deactivated':
        line(
          `${event.type === 'skill_activated' ? '+' : '-'} skill ${event.skill}${event.toolsAdded.length ? `: ${event.toolsAdded.join(', ')}` : ''}`,
        )
        return
      case 'error':
        line(`myc: ${event.message}`)
        return
      case 'session_end':
        if (event.reason !== 'done')
          err.write(`myc: run ended: ${event.reason} after ${countOf(event.turns, 'turn')}\n`)
        return
      default:
        return
    }
  }
}

/** How {@link humanSink} shows the model's text on `out`: as Markdown reads on a terminal (in colour where it may have it), as written elsewhere. */
export function markdownFor(out: Writable & { isTTY?: boolean }, env: ColourEnv): { markdown?: { colour: boolean } } {
  return out.isTTY === true ? { markdown: { colour: useColour(out, env) } } : {}
}
