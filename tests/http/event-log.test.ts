import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import {
  EVENT_CHARS_PER_SESSION,
  EVENTS_PER_STREAM,
  parseEventId,
  SessionEventLog,
  STREAMS_PER_SESSION,
} from '../../src/http/event-log.js'
import { keepResponseLine, responseLine } from '../../src/protocol/result-lines.js'

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: n },
})

async function replay(log: SessionEventLog, after: string): Promise<{ stream: string; sent: Array<[string, number]> }> {
  const sent: Array<[string, number]> = []
  const stream = await log.replayEventsAfter(after, {
    send: async (id, m) =>
      void sent.push([id, (m as unknown as { params?: { progress: number } }).params?.progress ?? -1]),
  })
  return { stream, sent }
}

describe('SessionEventLog: what a resumed stream replays', () => {
  it('replays the events of that stream after the given one, and nothing of another stream', async () => {
    const log = new SessionEventLog()
    const a1 = await log.storeEvent('post_a', note(1))
    await log.storeEvent('post_b', note(100))
    const a2 = await log.storeEvent('post_a', note(2))
    await log.storeEvent('post_a', note(3))
    expect(await replay(log, a1)).toEqual({
      stream: 'post_a',
      sent: [
        [a2, 2],
        [`post_a_${Number(a2.split('_').at(-1)) + 1}`, 3],
      ],
    })
    expect(log.streamOf(a2)).toBe('post_a')
    await expect(replay(log, 'post_c_1')).rejects.toThrow(/no stream/)
    expect(log.streamOf('garbage')).toBeUndefined()
  })

  it('keeps the newest events of a stream and the newest streams of a session', async () => {
    const log = new SessionEventLog()
    const first = await log.storeEvent('s', note(0))
    for (let i = 1; i <= EVENTS_PER_STREAM; i++) await log.storeEvent('s', note(i))
    // The first event fell off: resuming from it replays what is left.
    expect((await replay(log, first)).sent).toHaveLength(EVENTS_PER_STREAM)
    for (let i = 0; i < STREAMS_PER_SESSION; i++) await log.storeEvent(`other_${i}`, note(i))
    expect(log.streamOf(first)).toBeUndefined()
  })

  it('keeps at most its budget of characters: the oldest events go, and an answer larger than it is sent but never kept', async () => {
    expect(EVENT_CHARS_PER_SESSION).toBe(4 * 1024 * 1024)
    const log = new SessionEventLog(1_000)
    const answer = (n: number, chars: number): JSONRPCMessage => ({
      jsonrpc: '2.0',
      id: n,
      result: { content: [{ type: 'text', text: 'x'.repeat(chars) }] },
    })
    const priming = await log.storeEvent('post_a', {} as JSONRPCMessage)
    const big = await log.storeEvent('post_a', answer(1, 5_000))
    expect(log.keptChars()).toBeLessThan(10)
    // Resuming after the priming event would miss the answer that was not kept: refused, not answered with a gap.
    expect(log.streamOf(priming)).toBeUndefined()
    await expect(replay(log, priming)).rejects.toThrow(/can be resumed/)
    expect(log.streamOf(big)).toBe('post_a')
    // Three answers of ~400 characters: the oldest goes (with the priming events before it).
    const primingB = await log.storeEvent('post_b', {} as JSONRPCMessage)
    const ids = [await log.storeEvent('post_b', answer(2, 400)), await log.storeEvent('post_c', answer(3, 400))]
    expect(log.streamOf(primingB)).toBe('post_b')
    ids.push(await log.storeEvent('post_b', answer(4, 400)))
    expect(log.keptChars()).toBeLessThanOrEqual(1_000)
    expect(log.streamOf(primingB)).toBeUndefined()
    // After the answer that went, what is left of its stream is whole: it is replayed.
    expect(log.streamOf(ids[0]!)).toBe('post_b')
    expect((await replay(log, ids[0]!)).sent.map(([id]) => id)).toEqual([ids[2]])
    expect(log.streamOf(ids[1]!)).toBe('post_c')
  })

  it("lets go of a kept answer's child line once its event is written (kept, the line would double it)", async () => {
    const kept = (n: number) => {
      const message = { jsonrpc: '2.0' as const, id: `r${n}`, result: { content: [{ type: 'text', text: `hi ${n}` }] } }
      keepResponseLine(JSON.stringify({ result: message.result, jsonrpc: '2.0', id: `r${n}` }), message)
      return { result: message.result, jsonrpc: '2.0' as const, id: n }
    }
    const [written, unwritten] = [kept(5), kept(6)]
    const log = new SessionEventLog()
    await log.storeEvent('s', written)
    await log.storeEvent('s', unwritten)
    // The SDK writes the event right after the store (spliced-answers.ts writes the line), in this turn;
    expect(responseLine(written)).toBeDefined()
    await new Promise((resolve) => setImmediate(resolve))
    // then the line goes, written or not, and a replay serializes the message kept.
    expect(responseLine(unwritten)).toBeUndefined()
  })

  it('splits ids at the last underscore', () => {
    expect(parseEventId('a_b_12')).toEqual({ streamId: 'a_b', n: 12 })
    expect(parseEventId('_3')).toBeUndefined()
    expect(parseEventId('a_0')).toBeUndefined()
    expect(parseEventId('a_x')).toBeUndefined()
  })
})
