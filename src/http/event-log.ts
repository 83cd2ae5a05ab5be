import type { EventStore } from '@modelcontextprotocol/server'
import type { JSONRPCMessage } from '@modelcontextprotocol/client'

/** Events kept per stream: a stream resumed later than this many events back starts from what is left. */
export const EVENTS_PER_STREAM = 128
/** Streams kept per session (the oldest go first): a session opens a stream per POST that answers with SSE. */
export const STREAMS_PER_SESSION = 16

/**
 * One session's SSE events, for a client that lost a stream to come back
 * with `Last-Event-ID` and get what it missed (Streamable HTTP
 * resumability): each stream's newest EVENTS_PER_STREAM events, the newest
 * STREAMS_PER_SESSION streams, in this process's memory (it goes with the
 * session; a session carried over to another replica resumes its new
 * streams only). Event ids are `<stream>_<n>`, n counting up per session.
 *
 * It deliberately lacks the EventStore's optional `getStreamIdForEventId`:
 * with it, the SDK answers 409 to a resume while it still holds the old
 * connection of that stream, and a client whose connection dropped is
 * usually back before the server has noticed the drop. Without it the
 * resume takes the stream over (the SDK closes the old connection). The
 * route checks the id itself first with `streamOf` (400 for one this log
 * never gave out or no longer has).
 */
export class SessionEventLog implements EventStore {
  private readonly streams = new Map<string, Array<{ n: number; message: JSONRPCMessage }>>()
  private next = 0

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    let events = this.streams.get(streamId)
    if (!events) {
      this.streams.set(streamId, (events = []))
      if (this.streams.size > STREAMS_PER_SESSION) this.streams.delete(this.streams.keys().next().value!)
    }
    const n = ++this.next
    events.push({ n, message })
    if (events.length > EVENTS_PER_STREAM) events.shift()
    return `${streamId}_${n}`
  }

  /** The stream `eventId` belongs to, while this log still has that stream. */
  streamOf(eventId: string): string | undefined {
    const parsed = parseEventId(eventId)
    return parsed && this.streams.has(parsed.streamId) ? parsed.streamId : undefined
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const parsed = parseEventId(lastEventId)
    const events = parsed && this.streams.get(parsed.streamId)
    if (!parsed || !events) throw new Error(`no stream of this session has the event ${lastEventId}`)
    for (const event of events) if (event.n > parsed.n) await send(`${parsed.streamId}_${event.n}`, event.message)
    return parsed.streamId
  }
}

/** `<stream>_<n>` split at its last underscore (stream ids may hold underscores). */
export function parseEventId(eventId: string): { streamId: string; n: number } | undefined {
  const at = eventId.lastIndexOf('_')
  if (at <= 0) return undefined
  const n = Number(eventId.slice(at + 1))
  return Number.isSafeInteger(n) && n > 0 ? { streamId: eventId.slice(0, at), n } : undefined
}
