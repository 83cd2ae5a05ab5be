import type { EventStore } from '@modelcontextprotocol/server'
import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { jsonChars } from '../protocol/json-text.js'
import { forgetResponseLine } from '../protocol/result-lines.js'

/** Events kept per stream: an older one is let go. */
export const EVENTS_PER_STREAM = 128
/** Streams kept per session (the oldest go first): a session opens a stream per POST that answers with SSE. */
export const STREAMS_PER_SESSION = 16
/**
 * What a session's kept events may hold together, in characters of their
 * JSON (4 MiB): past it the oldest events go, and an event larger than it
 * alone (a large answer) is sent but never kept.
 */
export const EVENT_CHARS_PER_SESSION = 4 * 1024 * 1024

/** One stream's kept events, and the newest event of it that is no longer kept (0: none). */
interface Stream {
  events: Array<{ n: number; message: JSONRPCMessage; chars: number }>
  dropped: number
}

/**
 * One session's SSE events, for a client that lost a stream to come back
 * with `Last-Event-ID` and get what it missed (Streamable HTTP
 * resumability): each stream's newest EVENTS_PER_STREAM events, the newest
 * STREAMS_PER_SESSION streams, at most EVENT_CHARS_PER_SESSION characters
 * of them in all, in this process's memory (it goes with the session; a
 * session carried over to another replica resumes its new streams only).
 * Event ids are `<stream>_<n>`, n counting up per session. A resume from
 * before an event that was let go is refused (`streamOf`), not answered
 * with a gap: the client would wait for an answer that never comes.
 *
 * It deliberately lacks the EventStore's optional `getStreamIdForEventId`:
 * with it, the SDK answers 409 to a resume while it still holds the old
 * connection of that stream, and a client whose connection dropped is
 * usually back before the server has noticed the drop. Without it the
 * resume takes the stream over (the SDK closes the old connection). The
 * route checks the id itself first with `streamOf` (400 for one this log
 * never gave out or can no longer resume from).
 */
export class SessionEventLog implements EventStore {
  private readonly streams = new Map<string, Stream>()
  private next = 0
  private chars = 0

  constructor(private readonly maxChars = EVENT_CHARS_PER_SESSION) {}

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const stream = this.stream(streamId)
    const n = ++this.next
    const chars = jsonChars(message, this.maxChars)
    if (chars > this.maxChars) stream.dropped = n
    else {
      // A child's line kept beside the answer would double what is kept: it serves the write that follows
      // (spliced-answers.ts: the SDK writes the event in the turn this resolves) and goes after it.
      // (Only an answer can have one: a notification or a request schedules nothing.)
      if ('result' in message) setImmediate(forgetResponseLine, message)
      stream.events.push({ n, message, chars })
      this.chars += chars
      if (stream.events.length > EVENTS_PER_STREAM) this.dropFirst(stream)
      while (this.chars > this.maxChars) this.dropFirst(this.oldest()!)
    }
    return `${streamId}_${n}`
  }

  /** The stream `eventId` belongs to, while this log can resume that stream after it (it still has every later event). */
  streamOf(eventId: string): string | undefined {
    const parsed = parseEventId(eventId)
    const stream = parsed && this.streams.get(parsed.streamId)
    return stream && parsed.n >= stream.dropped ? parsed.streamId : undefined
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const streamId = this.streamOf(lastEventId)
    if (streamId === undefined) throw new Error(`no stream of this session can be resumed after ${lastEventId}`)
    const after = parseEventId(lastEventId)!.n
    for (const event of this.streams.get(streamId)!.events)
      if (event.n > after) await send(`${streamId}_${event.n}`, event.message)
    return streamId
  }

  /** Characters of the events kept now (for tests and metrics). */
  keptChars(): number {
    return this.chars
  }

  /** The stream of `streamId`, made when new (the oldest stream then goes past STREAMS_PER_SESSION). */
  private stream(streamId: string): Stream {
    let stream = this.streams.get(streamId)
    if (stream) return stream
    this.streams.set(flat(streamId), (stream = { events: [], dropped: 0 }))
    if (this.streams.size > STREAMS_PER_SESSION) {
      const [oldestId, oldest] = this.streams.entries().next().value!
      for (const event of oldest.events) this.chars -= event.chars
      this.streams.delete(oldestId)
    }
    return stream
  }

  /** The stream holding the session's oldest kept event. */
  private oldest(): Stream | undefined {
    let oldest: Stream | undefined
    for (const stream of this.streams.values())
      if (stream.events.length > 0 && (!oldest || stream.events[0]!.n < oldest.events[0]!.n)) oldest = stream
    return oldest
  }

  /** Lets go of `stream`'s first kept event. */
  private dropFirst(stream: Stream): void {
    const event = stream.events.shift()!
    this.chars -= event.chars
    stream.dropped = Math.max(stream.dropped, event.n)
  }
}

/**
 * A copy of `text` in one piece. The SDK builds a stream id out of some
 * dozen pieces (a rope in V8: ~400 bytes where the 36 characters take 56);
 * kept as a key of the log for the session's life, a flat copy is what it
 * should hold.
 */
function flat(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8')
}

/** `<stream>_<n>` split at its last underscore (stream ids may hold underscores). */
export function parseEventId(eventId: string): { streamId: string; n: number } | undefined {
  const at = eventId.lastIndexOf('_')
  if (at <= 0) return undefined
  const n = Number(eventId.slice(at + 1))
  return Number.isSafeInteger(n) && n > 0 ? { streamId: eventId.slice(0, at), n } : undefined
}
