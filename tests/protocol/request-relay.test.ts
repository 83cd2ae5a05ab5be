import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { Writable } from 'node:stream'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { LineWriter } from '../../src/protocol/line-writer.js'
import { Cancellation } from '../../src/protocol/cancellation.js'
import { RelayErrorCode, RequestRelay } from '../../src/protocol/request-relay.js'

/** A peer on the other end of the relay: records what it receives, answers by hand. */
function peer() {
  const received: Array<Record<string, unknown>> = []
  const relay = new RequestRelay(async (m) => {
    received.push(m as unknown as Record<string, unknown>)
  })
  const answer = (message: Record<string, unknown>) => relay.intercept({ jsonrpc: '2.0', ...message } as JSONRPCMessage)
  return { relay, received, answer }
}

describe('RequestRelay', () => {
  it('sends with its own string id and hands back the peer’s result untouched', async () => {
    const { relay, received, answer } = peer()
    const pending = relay.request('tools/call', { name: 'x', arguments: { a: 1 } }, { timeoutMs: 1_000 })
    expect(received[0]).toMatchObject({ method: 'tools/call', params: { name: 'x', arguments: { a: 1 } } })
    const id = received[0]!.id as string
    expect(id).toMatch(/^myc-\d+$/)
    const result = { content: [{ type: 'text', text: 'ok' }], extra: { kept: true } }
    expect(answer({ id, result })).toBe(true)
    expect(await pending).toEqual({ ok: true, result })
    expect(relay.inFlight).toBe(0)
  })

  it('passes errors through and ignores messages that are not its own', async () => {
    const { relay, received, answer } = peer()
    const pending = relay.request('prompts/get', { name: 'p' }, { timeoutMs: 1_000 })
    expect(answer({ id: 1, result: {} })).toBe(false)
    expect(answer({ id: 'other-1', result: {} })).toBe(false)
    expect(answer({ method: 'notifications/progress', params: { progressToken: 5, progress: 1 } })).toBe(false)
    answer({ id: received[0]!.id, error: { code: -32602, message: 'bad' } })
    expect(await pending).toEqual({ ok: false, error: { code: -32602, message: 'bad' } })
  })

  it('asks for progress only when the caller wants it, and never leaks the caller’s token', async () => {
    const { relay, received, answer } = peer()
    const seen: number[] = []
    const withProgress = relay.request(
      'tools/call',
      { name: 'x', _meta: { progressToken: 'client-token', other: 1 } },
      { timeoutMs: 1_000, onProgress: (p) => seen.push(p.progress) },
    )
    const id = received[0]!.id as string
    expect((received[0]!.params as { _meta: unknown })._meta).toEqual({ progressToken: id, other: 1 })
    expect(answer({ method: 'notifications/progress', params: { progressToken: id, progress: 1, total: 2 } })).toBe(
      true,
    )
    answer({ id, result: {} })
    await withProgress
    expect(seen).toEqual([1])
    const without = relay.request(
      'tools/call',
      { name: 'y', _meta: { progressToken: 'client-token' } },
      { timeoutMs: 1_000 },
    )
    expect((received[1]!.params as { _meta: unknown })._meta).toEqual({})
    answer({ id: received[1]!.id, result: {} })
    await without
  })

  // The relay's clock (Date.now and its one timer) runs on vitest's fake timers here: time passes when the test says.
  afterEach(() => {
    vi.useRealTimers()
  })

  it('times out, cancels at the peer, and progress resets the timer', async () => {
    vi.useFakeTimers()
    const { relay, received, answer } = peer()
    let settled = false
    const pending = relay.request('tools/call', {}, { timeoutMs: 200, onProgress: () => {} })
    void pending.then(() => (settled = true))
    const id = received[0]!.id as string
    for (let i = 0; i < 4; i++) {
      await vi.advanceTimersByTimeAsync(120)
      answer({ method: 'notifications/progress', params: { progressToken: id, progress: i } })
    }
    // 480 ms after a 200 ms timeout, but never 200 ms without progress.
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(199)
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    const outcome = await pending
    expect(outcome).toMatchObject({ ok: false, error: { code: RelayErrorCode.timeout } })
    expect(received.at(-1)).toMatchObject({ method: 'notifications/cancelled', params: { requestId: id } })
  })

  it('cancels at the peer when the caller aborts', async () => {
    const { relay, received } = peer()
    const cancellation = new Cancellation()
    const pending = relay.request('tools/call', {}, { timeoutMs: 5_000, cancellation })
    cancellation.cancel('stop')
    expect(await pending).toMatchObject({ ok: false, error: { code: RelayErrorCode.cancelled } })
    expect(received.at(-1)).toMatchObject({
      method: 'notifications/cancelled',
      params: { requestId: received[0]!.id, reason: 'stop' },
    })
  })

  it('settles a call whose line a broken writer refuses with a connection error, and waits on one it queued', async () => {
    const broken = new Writable({ write: (_chunk, _encoding, done) => done(new Error('EPIPE')) })
    broken.on('error', () => {})
    const writer = new LineWriter(broken)
    const relay = new RequestRelay((m) => writer.write(JSON.stringify(m)))
    // Queued while the writer still looks whole: the call waits for its answer (the peer's going away ends it).
    const queued = relay.request('tools/call', {}, { timeoutMs: 5_000 })
    await new Promise<void>((resolve) => setImmediate(resolve))
    expect(relay.inFlight).toBe(1)
    // Refused once the writer knows it is broken: the call ends at once, with why.
    const refused = await relay.request('tools/call', {}, { timeoutMs: 60_000 })
    expect(refused).toMatchObject({
      ok: false,
      error: { code: RelayErrorCode.connectionClosed, message: 'Could not send the request: EPIPE' },
    })
    relay.failAll('gone')
    expect(await queued).toMatchObject({ ok: false, error: { message: 'gone' } })
  })

  it('fails every waiting call when the peer goes away', async () => {
    const { relay } = peer()
    const a = relay.request('tools/call', {}, { timeoutMs: 5_000 })
    const b = relay.request('tools/call', {}, { timeoutMs: 5_000 })
    relay.failAll('gone')
    expect(await a).toEqual({ ok: false, error: { code: RelayErrorCode.connectionClosed, message: 'gone' } })
    expect(await b).toMatchObject({ ok: false })
    expect(relay.inFlight).toBe(0)
  })

  it('shares one timer: a shorter deadline after a longer one still fires on time, and the longer one waits', async () => {
    vi.useFakeTimers()
    const { relay, received, answer } = peer()
    const long = relay.request('tools/call', {}, { timeoutMs: 2_000 })
    let shortSettled = false
    const short = relay.request('tools/call', {}, { timeoutMs: 100 })
    void short.then(() => (shortSettled = true))
    await vi.advanceTimersByTimeAsync(99)
    expect(shortSettled).toBe(false)
    // On time: at its own 100 ms, not at the 2 s of the timer armed before it.
    await vi.advanceTimersByTimeAsync(1)
    expect(shortSettled).toBe(true)
    expect(await short).toMatchObject({ ok: false, error: { code: RelayErrorCode.timeout, data: { timeout: 100 } } })
    await vi.advanceTimersByTimeAsync(1_800)
    expect(relay.inFlight).toBe(1)
    answer({ id: received[0]!.id, result: { late: true } })
    expect(await long).toEqual({ ok: true, result: { late: true } })
  })
})

describe('Cancellation', () => {
  it('calls each listener once, at once for late ones, and forgets listeners taken off', () => {
    const c = new Cancellation()
    const calls: string[] = []
    const a = () => calls.push('a')
    c.onCancel(a)
    c.onCancel(() => calls.push('b'))
    c.off(a)
    c.cancel('why')
    c.cancel('again')
    c.onCancel(() => calls.push('late'))
    expect(calls).toEqual(['b', 'late'])
    expect(c.aborted).toBe(true)
    expect(c.reason).toBe('why')
  })

  it('calls its listeners in the order they came, whichever were taken off', () => {
    const c = new Cancellation()
    const calls: string[] = []
    const listener = (name: string) => () => calls.push(name)
    const [a, b, c1, d] = [listener('a'), listener('b'), listener('c'), listener('d')]
    for (const l of [a, b, c1, d]) c.onCancel(l)
    c.off(a)
    c.off(c1)
    c.onCancel(a)
    c.off(b)
    c.off(() => {})
    c.cancel('why')
    expect(calls).toEqual(['d', 'a'])
  })

  it('makes an AbortSignal only when asked, aborted with the same reason', () => {
    const c = new Cancellation()
    const signal = c.signal
    expect(signal.aborted).toBe(false)
    c.cancel('stop')
    expect(signal.aborted).toBe(true)
    expect(signal.reason).toBe('stop')
    const late = new Cancellation()
    late.cancel('x')
    expect(late.signal.aborted).toBe(true)
    const controller = new AbortController()
    const followed = Cancellation.from(controller.signal)
    controller.abort('y')
    expect(followed.aborted && followed.reason).toBe('y')
  })
})
