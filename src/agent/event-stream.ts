import { randomUUID } from 'node:crypto'
import type { Writable } from 'node:stream'
import type { AgentEvent, AgentEventBody } from './events.js'

/**
 * Stamps events (seq, time, session id) and hands each to its sinks: the
 * JSON Lines stream on stdout (`--json`), or the human rendering (text on
 * stdout, tool activity on stderr).
 */
export class EventStream {
  /** Set again when a run continues a recorded session. */
  sessionId: string
  private seq = 0

  constructor(
    private readonly sink: (event: AgentEvent) => void,
    sessionId: string = randomUUID(),
  ) {
    this.sessionId = sessionId
  }

  emit = (body: AgentEventBody): void => {
    this.sink({ ...body, seq: ++this.seq, time: new Date().toISOString(), sessionId: this.sessionId } as AgentEvent)
  }
}

/** One JSON object per line: nothing else ever goes to this stream. */
export function jsonLinesSink(out: Writable): (event: AgentEvent) => void {
  return (event) => {
    out.write(`${JSON.stringify(event)}\n`)
  }
}

/**
 * For people: the assistant's text on stdout, tool calls and status on
 * stderr. Text deltas, when asked for, are written as they come and the
 * finished block is then not written again.
 */
export function humanSink(out: Writable, err: Writable): (event: AgentEvent) => void {
  let streamed = false
  return (event) => {
    switch (event.type) {
      case 'text_delta':
        streamed = true
        out.write(event.text)
        return
      case 'text':
        if (!streamed) out.write(event.text.endsWith('\n') ? event.text : `${event.text}\n`)
        else out.write('\n')
        streamed = false
        return
      case 'tool_call':
        err.write(`→ ${event.tool} ${JSON.stringify(event.input).slice(0, 200)}\n`)
        return
      case 'tool_result':
        err.write(`${event.ok ? '✓' : '✗'} ${event.tool} (${event.durationMs} ms)\n`)
        return
      case 'skill_activated':
      case 'skill_deactivated':
        err.write(`${event.type === 'skill_activated' ? '+' : '-'} skill ${event.skill}${event.toolsAdded.length ? `: ${event.toolsAdded.join(', ')}` : ''}\n`)
        return
      case 'error':
        err.write(`myc: ${event.message}\n`)
        return
      case 'session_end':
        if (event.reason !== 'done') err.write(`myc: run ended: ${event.reason} after ${event.turns} turns\n`)
        return
      default:
        return
    }
  }
}
