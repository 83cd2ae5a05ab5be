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
 * before (tests/http/large-messages.test.ts then fails, which says so).
 */
export function writeChildLines(transport: WebStandardStreamableHTTPServerTransport): void {
  const target = transport as unknown as { writeSSEEvent?: EventWriter; onerror?: (error: Error) => void }
  const own = target.writeSSEEvent
  if (typeof own !== 'function') return
  target.writeSSEEvent = function (this: unknown, controller, encoder, message, eventId) {
    const line = responseLine(message)
    if (line === undefined || (typeof line === 'string' ? line.includes('\r') : line.some((p) => p.includes(CR))))
      return own.call(this, controller, encoder, message, eventId)
    try {
      for (const chunk of eventChunks(`event: message\n${eventId ? `id: ${eventId}\n` : ''}data: `, line))
        controller.enqueue(chunk)
      return true
    } catch (error) {
      target.onerror?.(error instanceof Error ? error : new Error(String(error)))
      return false
    }
  }
}

/** Pieces of a line shorter than this are joined with what surrounds them (the id, a brace) rather than sent alone. */
const JOIN_BELOW = 1024

/** An event's bytes in as few chunks as its line allows: the line's small pieces joined to the event's own text, a large piece passed on as it is (not copied). */
function eventChunks(head: string, line: string | Buffer[]): Buffer[] {
  if (typeof line === 'string') return [Buffer.from(`${head}${line}\n\n`)]
  const chunks: Buffer[] = []
  let small: Buffer[] = [Buffer.from(head)]
  for (const piece of line) {
    if (piece.length < JOIN_BELOW) small.push(piece)
    else {
      if (small.length > 0) chunks.push(Buffer.concat(small))
      chunks.push(piece)
      small = []
    }
  }
  small.push(Buffer.from('\n\n'))
  chunks.push(Buffer.concat(small))
  return chunks
}
