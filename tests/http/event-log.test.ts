import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { EVENTS_PER_STREAM, parseEventId, SessionEventLog, STREAMS_PER_SESSION } from '../../src/http/event-log.js'

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: n },
})

async function replay(log: SessionEventLog, after: string): Promise<{ stream: string; sent: Array<[string, number]> }> {
  const sent: Array<[string, number]> = []
  const stream = await log.replayEventsAfter(after, {
    send: async (id, m) => void sent.push([id, (m as unknown as { params: { progress: number } }).params.progress]),
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

  it('splits ids at the last underscore', () => {
    expect(parseEventId('a_b_12')).toEqual({ streamId: 'a_b', n: 12 })
    expect(parseEventId('_3')).toBeUndefined()
    expect(parseEventId('a_0')).toBeUndefined()
    expect(parseEventId('a_x')).toBeUndefined()
  })
})
