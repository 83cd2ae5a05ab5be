import type { JSONRPCMessage, WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server'
import { responseLine } from '../protocol/result-lines.js'

/** How the SDK's transport writes one SSE event: true when it was written. */
type EventWriter = (
  controller: ReadableStreamDefaultController<Uint8Array>,
  encoder: unknown,
  message: JSONRPCMessage,
  eventId?: string,
) => boolean

const CR = 0x0d

/**
 * Makes a session's transport write a child's answer as the child wrote it:
 * an SSE event whose data is the child's line with the client's id spliced
 * in (`protocol/result-lines.ts`, as the stdio face writes it), where the
 * SDK would serialise the answer again (`JSON.stringify`, then encode it:
 * for a 2 MiB answer some 9 ms of the event loop). Everything else the SDK
 * does with the answer stays its own: the event log (kept for a resumed
 * stream, which the SDK replays from the message), the request's stream and
 * its end. Every other message, and a line holding a carriage return
 * (JSON whitespace, but an end of line in SSE), is written by the SDK's own
 * writer.
 *
 * The writer is the SDK transport's own method (`writeSSEEvent`, private
 * in its types, SDK 2.x), replaced on this instance: with an SDK that has
 * none by that name, nothing is replaced and the SDK writes every event as
 * before (tests/http/large-answers.test.ts then fails, which says so).
 */
export function writeChildLines(transport: WebStandardStreamableHTTPServerTransport): void {
  const target = transport as unknown as { writeSSEEvent?: EventWriter; onerror?: (error: Error) => void }
  const own = target.writeSSEEvent
  if (typeof own !== 'function') return
  target.writeSSEEvent = function (this: unknown, controller, encoder, message, eventId) {
    const line = responseLine(message)
    const pieces = line === undefined ? undefined : typeof line === 'string' ? [Buffer.from(line)] : line
    if (!pieces || pieces.some((piece) => piece.includes(CR)))
      return own.call(this, controller, encoder, message, eventId)
    try {
      controller.enqueue(Buffer.from(`event: message\n${eventId ? `id: ${eventId}\n` : ''}data: `))
      for (const piece of pieces) controller.enqueue(piece)
      controller.enqueue(Buffer.from('\n\n'))
      return true
    } catch (error) {
      target.onerror?.(error instanceof Error ? error : new Error(String(error)))
      return false
    }
  }
}
