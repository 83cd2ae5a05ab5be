import type { ServerContext } from '@modelcontextprotocol/server'
import { describe, expect, it, vi } from 'vitest'
import { waitFor } from '../../helpers/wait-for.js'
import type { PrincipalView } from '../../../src/principal/view.js'
import type { RelayOutcome } from '../../../src/protocol/request-relay.js'
import type { CallOrigin, ConnectionHandle, Runtime } from '../../../src/runtime/runtime.js'
import {
  inputResponseProblem,
  QUIET_MS,
  requiredCapabilities,
  STATE_PREFIX,
  type ParkedCall,
  type RoundSink,
} from '../../../src/eras/modern/parked-calls.js'
import { isParkedState, ParkedCalls } from '../../../src/eras/modern/parked-registry.js'

/** The part of a Runtime a parked call uses: the connections it joins while its call runs. */
function fakeRuntime(): Runtime & { joined: Set<ConnectionHandle> } {
  const joined = new Set<ConnectionHandle>()
  return {
    joined,
    addConnection: (c: ConnectionHandle) => joined.add(c),
    removeConnection: (c: ConnectionHandle) => joined.delete(c),
  } as unknown as Runtime & { joined: Set<ConnectionHandle> }
}

const view = { serverVisible: (s: string) => s !== 'hidden' } as unknown as PrincipalView

/** A request context as the SDK hands a handler: method and credential are what requestState is bound to. */
function ctxOf(method: string, clientId = 'alice'): ServerContext {
  return { mcpReq: { method }, http: { authInfo: { clientId, token: '', scopes: [] } } } as unknown as ServerContext
}

const sink = (logs: unknown[] = []): RoundSink => ({
  log: (level, data, server) => logs.push({ level, data, server }),
  progress: () => {},
})
const elicitParams = {
  message: 'Colour?',
  requestedSchema: { type: 'object', properties: { colour: { type: 'string' } } },
}
const accept = (content: Record<string, unknown>) => ({ action: 'accept', content })

/**
 * A child's call as the runtime would run it: `script` gets the call's
 * origin and asks through the parked call, as a 2025 child's requests
 * reach it (forwardRequest with the call's own request id).
 */
function startCall(
  calls: ParkedCalls,
  script: (
    ask: (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>,
    origin: CallOrigin,
  ) => Promise<RelayOutcome | undefined>,
  caps: Record<string, unknown> = { elicitation: {}, sampling: {}, roots: {} },
): ParkedCall {
  const call = calls.open(view, { method: 'tools/call', name: 'child__ask' }, ctxOf('tools/call'))
  call.clientCapabilities = caps
  call.start((origin) =>
    script(
      (method, params) => call.forwardRequest('child', method, params, new AbortController().signal, origin.requestId),
      origin,
    ),
  )
  return call
}

const text = (t: string): RelayOutcome => ({ ok: true, result: { content: [{ type: 'text', text: t }] } })

describe('inputResponseProblem / inputResponsesProblem: the client’s answers have their results’ shape', () => {
  it('accepts each request’s result', () => {
    expect(inputResponseProblem('elicitation/create', accept({ colour: 'red' }))).toBeUndefined()
    expect(inputResponseProblem('elicitation/create', { action: 'decline' })).toBeUndefined()
    expect(
      inputResponseProblem('sampling/createMessage', {
        role: 'assistant',
        content: { type: 'text', text: 'hi' },
        model: 'm',
      }),
    ).toBeUndefined()
    expect(inputResponseProblem('roots/list', { roots: [{ uri: 'file:///x' }] })).toBeUndefined()
  })

  it('names what is wrong', () => {
    expect(inputResponseProblem('elicitation/create', 12345)).toBe('is not an object')
    expect(inputResponseProblem('elicitation/create', { action: 'maybe' })).toMatch(/action/)
    expect(inputResponseProblem('elicitation/create', { action: 'accept', content: 'red' })).toMatch(/content/)
    expect(inputResponseProblem('sampling/createMessage', { content: { type: 'text', text: 'x' } })).toMatch(/role/)
    expect(inputResponseProblem('roots/list', { roots: [{ name: 'no uri' }] })).toMatch(/uri/)
  })

  it('turns capability names into a ClientCapabilities object', () => {
    expect(requiredCapabilities(['sampling'])).toEqual({ sampling: {} })
    expect(requiredCapabilities(['elicitation.url', 'roots'])).toEqual({ elicitation: { url: {} }, roots: {} })
  })
})

describe('ParkedCall: a 2025 child’s questions during a 2026 client’s call', () => {
  it('parks the call on a question, answers with input_required, and completes on the retry', async () => {
    const runtime = fakeRuntime()
    const calls = new ParkedCalls(runtime)
    const call = startCall(calls, async (ask) => {
      const answer = await ask('elicitation/create', { ...elicitParams, _meta: { progressToken: 7 } })
      return text(`colour=${(answer.content as { colour: string }).colour}`)
    })
    expect(runtime.joined.has(call)).toBe(true)
    const first = await call.next(new AbortController().signal, sink())
    expect(first).toEqual({
      kind: 'ask',
      inputRequests: { elicitation_1: { method: 'elicitation/create', params: elicitParams } },
    })
    // Between rounds the call waits for its client: the runtime should prefer other callers for new questions.
    expect(call.awaitingClient()).toBe(true)
    call.answer({ elicitation_1: accept({ colour: 'green' }), unknown_key: accept({}) })
    const second = await call.next(new AbortController().signal, sink())
    expect(second).toEqual({ kind: 'done', outcome: text('colour=green') })
    expect(runtime.joined.has(call)).toBe(false)
  })

  it('gathers questions asked together into one round, and asks again what was left unanswered', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const call = startCall(calls, async (ask) => {
      const [a, b, c] = await Promise.all([
        ask('elicitation/create', elicitParams),
        ask('sampling/createMessage', { messages: [], maxTokens: 5 }),
        ask('roots/list', {}),
      ])
      return text(JSON.stringify([a.action, b.role, (c.roots as unknown[]).length]))
    })
    const first = await call.next(new AbortController().signal, sink())
    expect(first.kind === 'ask' && Object.keys(first.inputRequests)).toEqual(['elicitation_1', 'sampling_2', 'roots_3'])
    call.answer({ sampling_2: { role: 'assistant', content: { type: 'text', text: 'hi' } } })
    const second = await call.next(new AbortController().signal, sink())
    expect(second.kind === 'ask' && Object.keys(second.inputRequests)).toEqual(['elicitation_1', 'roots_3'])
    call.answer({ elicitation_1: { action: 'decline' }, roots_3: { roots: [{ uri: 'file:///a' }] } })
    expect(await call.next(new AbortController().signal, sink())).toEqual({
      kind: 'done',
      outcome: text('["decline","assistant",1]'),
    })
  })

  it('asks round after round when the child asks one question after another', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const call = startCall(calls, async (ask) => {
      const name = await ask('elicitation/create', {
        message: 'Name?',
        requestedSchema: { type: 'object', properties: {} },
      })
      const colour = await ask('elicitation/create', {
        message: 'Colour?',
        requestedSchema: { type: 'object', properties: {} },
      })
      return text(`${JSON.stringify(name.content)} ${JSON.stringify(colour.content)}`)
    })
    const r1 = await call.next(new AbortController().signal, sink())
    expect(r1.kind === 'ask' && Object.keys(r1.inputRequests)).toEqual(['elicitation_1'])
    call.answer({ elicitation_1: accept({ n: 'Ada' }) })
    const r2 = await call.next(new AbortController().signal, sink())
    expect(r2.kind === 'ask' && r2.inputRequests.elicitation_2?.params.message).toBe('Colour?')
    call.answer({ elicitation_2: accept({ c: 'blue' }) })
    expect(await call.next(new AbortController().signal, sink())).toEqual({
      kind: 'done',
      outcome: text('{"n":"Ada"} {"c":"blue"}'),
    })
  })

  it('refuses an answer of the wrong shape, naming the key, and keeps the question out', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const call = startCall(calls, async (ask) => text(JSON.stringify(await ask('elicitation/create', elicitParams))))
    await call.next(new AbortController().signal, sink())
    expect(() => call.answer({ elicitation_1: { action: 'perhaps' } })).toThrow(
      /inputResponses\["elicitation_1"\].*action/,
    )
    const again = await call.next(new AbortController().signal, sink())
    expect(again.kind).toBe('ask')
    call.answer({ elicitation_1: { action: 'cancel' } })
    expect(await call.next(new AbortController().signal, sink())).toEqual({
      kind: 'done',
      outcome: text('{"action":"cancel"}'),
    })
  })

  it('refuses a question the client did not declare, and a failed call then names the missing capability (-32021)', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const call = startCall(
      calls,
      async (ask) => {
        try {
          await ask('sampling/createMessage', { messages: [], maxTokens: 5 })
          return text('sampled')
        } catch (error) {
          return { ok: true, result: { content: [{ type: 'text', text: String(error) }], isError: true } }
        }
      },
      { elicitation: {} },
    )
    const step = await call.next(new AbortController().signal, sink())
    expect(step.kind).toBe('done')
    const explained = call.explain(step.kind === 'done' ? step.outcome : undefined)
    expect(explained).toMatchObject({
      ok: false,
      error: { code: -32021, data: { requiredCapabilities: { sampling: {} } } },
    })
  })

  it('answers an undeclared elicitation with a decline and undeclared roots with none, asking the client only what it declared', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const call = startCall(
      calls,
      async (ask) => {
        const [elicited, roots, sampled] = await Promise.all([
          ask('elicitation/create', elicitParams),
          ask('roots/list', {}),
          ask('sampling/createMessage', { messages: [], maxTokens: 5 }),
        ])
        return text(JSON.stringify({ elicited, roots, sampled }))
      },
      { sampling: {} },
    )
    const first = await call.next(new AbortController().signal, sink())
    // Only the declared kind reaches the client.
    expect(first.kind === 'ask' && Object.keys(first.inputRequests)).toEqual(['sampling_1'])
    call.answer({ sampling_1: { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' } })
    const done = await call.next(new AbortController().signal, sink())
    expect(
      done.kind === 'done' &&
        JSON.parse(
          (done.outcome as unknown as { result: { content: Array<{ text: string }> } }).result.content[0]!.text,
        ),
    ).toMatchObject({ elicited: { action: 'decline' }, roots: { roots: [] }, sampled: { model: 'm' } })
    // A call that succeeds with the stand-ins is kept as it is.
    expect(done.kind === 'done' && call.explain(done.outcome)).toEqual(done.kind === 'done' && done.outcome)
  })

  it('names what was stood in for when the call then fails (-32021)', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const call = startCall(
      calls,
      async (ask) => {
        const answer = (await ask('elicitation/create', elicitParams)) as { action: string }
        return {
          ok: true,
          result: { content: [{ type: 'text', text: `needed a name, got ${answer.action}` }], isError: true },
        }
      },
      {},
    )
    const step = await call.next(new AbortController().signal, sink())
    expect(step.kind === 'done' && call.explain(step.outcome)).toMatchObject({
      ok: false,
      error: { code: -32021, data: { requiredCapabilities: { elicitation: {} } } },
    })
  })

  it('refuses questions outside its own call (another request id, or none)', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    let release!: () => void
    const call = startCall(calls, () => new Promise<RelayOutcome>((resolve) => (release = () => resolve(text('done')))))
    await expect(
      call.forwardRequest('child', 'elicitation/create', elicitParams, new AbortController().signal),
    ).rejects.toThrow(/only during its own request/)
    await expect(
      call.forwardRequest('child', 'elicitation/create', elicitParams, new AbortController().signal, 'another'),
    ).rejects.toThrow(/only during its own request/)
    await expect(
      call.forwardRequest('child', 'ping', {}, new AbortController().signal, call.origin.requestId),
    ).rejects.toThrow(/cannot be asked ping/)
    release()
    expect(await call.next(new AbortController().signal, sink())).toEqual({ kind: 'done', outcome: text('done') })
  })

  it('rejects next() when the client gives up on its request, and the cancellation reaches the child', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    let childSignal!: AbortSignal
    const call = calls.open(view, { method: 'tools/call', name: 'child__ask' }, ctxOf('tools/call'))
    call.clientCapabilities = { elicitation: {} }
    call.start(
      () =>
        new Promise<RelayOutcome | undefined>((resolve) => {
          childSignal = call.cancellation.signal
          childSignal.addEventListener('abort', () => resolve(undefined))
        }),
    )
    const gaveUp = new AbortController()
    const waiting = call.next(gaveUp.signal, sink())
    gaveUp.abort(new Error('client went away'))
    await expect(waiting).rejects.toThrow(/client went away/)
    call.cancellation.cancel('cancelled by the client')
    expect(childSignal.aborted).toBe(true)
    expect(await call.next(new AbortController().signal, sink())).toEqual({ kind: 'done', outcome: undefined })
  })

  it('sends the child’s log messages of this call to the request waiting on it, and none between rounds', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    let release!: () => void
    const call = startCall(calls, () => new Promise<RelayOutcome>((resolve) => (release = () => resolve(text('ok')))))
    const log = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { level: 'info', data: 'working' } }
    call.childNotification('child', log, call.origin.requestId) // nobody waiting: dropped
    const logs: unknown[] = []
    const waiting = call.next(new AbortController().signal, sink(logs))
    call.childNotification('child', log, call.origin.requestId)
    call.childNotification('hidden', log, call.origin.requestId)
    call.childNotification('child', log) // not related to this call
    release()
    await waiting
    expect(logs).toEqual([{ level: 'info', data: 'working', server: 'child' }])
  })
})

describe('ParkedCall.snapshot / settle: where a call is, for a task that polls it', () => {
  const settleFor = (call: ParkedCall, ms: number, logs: unknown[] = []) =>
    call.settle(ms, new AbortController().signal, sink(logs))

  it('says working, then input_required with every question once the round closed, then done; changing nothing', async () => {
    let release!: () => void
    const call = startCall(new ParkedCalls(fakeRuntime()), async (ask) => {
      const [a, b] = await Promise.all([
        ask('elicitation/create', elicitParams),
        ask('elicitation/create', { ...elicitParams, message: 'Size?' }),
      ])
      await new Promise<void>((r) => (release = r))
      return text(`${String(a.action)} ${String(b.action)}`)
    })
    // A round still gathering (QUIET_MS) counts as working.
    expect(call.snapshot()).toEqual({ kind: 'working' })
    await waitFor(() => call.snapshot().kind === 'input_required', 5_000, 'the round to close')
    const asked = call.snapshot()
    expect(asked).toEqual({
      kind: 'input_required',
      inputRequests: {
        elicitation_1: { method: 'elicitation/create', params: elicitParams },
        elicitation_2: { method: 'elicitation/create', params: { ...elicitParams, message: 'Size?' } },
      },
    })
    // Looking does not answer, cancel or time anything out.
    expect(call.snapshot()).toEqual(asked)
    expect(call.cancellation.aborted).toBe(false)
    call.answer({ elicitation_1: accept({}) })
    expect(call.snapshot()).toEqual({
      kind: 'input_required',
      inputRequests: { elicitation_2: { method: 'elicitation/create', params: { ...elicitParams, message: 'Size?' } } },
    })
    call.answer({ elicitation_2: { action: 'decline' } })
    await waitFor(() => call.snapshot().kind === 'working', 5_000, 'the call to go on with its answers')
    expect(call.snapshot()).toEqual({ kind: 'working' })
    release()
    await waitFor(() => call.snapshot().kind === 'done', 5_000, 'the call to end')
    expect(call.snapshot()).toEqual({ kind: 'done', outcome: text('accept decline') })
  })

  it('settle waits at most its time for the end or a question, with the request’s log messages meanwhile, and cancels nothing', async () => {
    let release!: () => void
    const slow = startCall(
      new ParkedCalls(fakeRuntime()),
      () => new Promise<RelayOutcome>((resolve) => (release = () => resolve(text('late')))),
    )
    const logs: unknown[] = []
    // The clock (Date.now and the wait's timer) is vitest's here: time passes only when the test advances it.
    vi.useFakeTimers()
    try {
      let settled = false
      const waiting = settleFor(slow, 80, logs).finally(() => (settled = true))
      slow.childNotification(
        'child',
        { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'busy' } },
        slow.origin.requestId,
      )
      await vi.advanceTimersByTimeAsync(79)
      expect(settled).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      expect(await waiting).toEqual({ kind: 'working' })
      expect(logs).toEqual([{ level: 'info', data: 'busy', server: 'child' }])
      expect(slow.cancellation.aborted).toBe(false)
      release()
      expect(await settleFor(slow, 5_000)).toEqual({ kind: 'done', outcome: text('late') })

      // With the clock stopped, an end or a question must end the wait by itself (else these never resolve).
      const quick = startCall(new ParkedCalls(fakeRuntime()), async () => text('at once'))
      expect(await settleFor(quick, 5_000)).toEqual({ kind: 'done', outcome: text('at once') })
      const asking = startCall(new ParkedCalls(fakeRuntime()), async (ask) =>
        text(JSON.stringify(await ask('elicitation/create', elicitParams))),
      )
      // A question ends the wait at once (its round may still be gathering: working).
      expect((await settleFor(asking, 5_000)).kind).not.toBe('done')
    } finally {
      vi.useRealTimers()
    }
  })

  it('counts as waiting for its client only once its round closed: a question right after another is likelier its own', async () => {
    // The clock is vitest's: the round's quiet time passes only when the test advances it, however busy the machine.
    vi.useFakeTimers()
    try {
      const call = startCall(new ParkedCalls(fakeRuntime()), async (ask) =>
        text(JSON.stringify(await ask('elicitation/create', elicitParams))),
      )
      await vi.advanceTimersByTimeAsync(QUIET_MS - 1) // the round is still gathering: not yet the client's to answer
      expect(call.snapshot().kind).toBe('working')
      expect(call.awaitingClient()).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      expect(call.awaitingClient()).toBe(true)
      expect(call.snapshot().kind).toBe('input_required')
    } finally {
      vi.useRealTimers()
    }
  })

  it('settle rejects when the request is given up on', async () => {
    const call = startCall(new ParkedCalls(fakeRuntime()), () => new Promise<RelayOutcome>(() => {}))
    const gaveUp = new AbortController()
    const waiting = call.settle(5_000, gaveUp.signal, sink())
    gaveUp.abort(new Error('gone'))
    await expect(waiting).rejects.toThrow(/gone/)
  })
})

describe('ParkedCalls: requestState names a parked call, sealed and bound', () => {
  async function parkedOne(calls: ParkedCalls): Promise<{ call: ParkedCall; state: string }> {
    const call = startCall(calls, async (ask) => text(JSON.stringify(await ask('elicitation/create', elicitParams))))
    await call.next(new AbortController().signal, sink())
    return { call, state: await calls.mint(call, ctxOf('tools/call')) }
  }

  it('mints myc’s own state, a new one each round, and finds the call again from it', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const { call, state } = await parkedOne(calls)
    expect(state.startsWith(STATE_PREFIX)).toBe(true)
    expect(await calls.mint(call, ctxOf('tools/call'))).not.toBe(state)
    const verified = await calls.verify(state, ctxOf('tools/call'))
    expect(isParkedState(verified)).toBe(true)
    expect(calls.resume(verified as never, { method: 'tools/call', name: 'child__ask' }, ctxOf('tools/call'))).toBe(
      call,
    )
  })

  it('leaves a child’s own state alone (undefined: the SDK keeps the raw string)', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    expect(await calls.verify('v1.someone-elses.state', ctxOf('tools/call'))).toBeUndefined()
  })

  it('refuses a tampered state, one of another method or credential, and one for another request', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const { state } = await parkedOne(calls)
    await expect(calls.verify(`${state}-TAMPERED`, ctxOf('tools/call'))).rejects.toThrow()
    await expect(calls.verify(state, ctxOf('prompts/get'))).rejects.toThrow()
    await expect(calls.verify(state, ctxOf('tools/call', 'mallory'))).rejects.toThrow()
    const verified = (await calls.verify(state, ctxOf('tools/call'))) as never
    expect(() => calls.resume(verified, { method: 'tools/call', name: 'child__other' }, ctxOf('tools/call'))).toThrow(
      /names no request mycelium is waiting on/,
    )
    // Another registry (another replica, or a restart) never issued it.
    await expect(new ParkedCalls(fakeRuntime()).verify(state, ctxOf('tools/call'))).rejects.toThrow()
  })

  it('cancels every parked call on close', async () => {
    const calls = new ParkedCalls(fakeRuntime())
    const { call } = await parkedOne(calls)
    calls.close()
    expect(call.cancellation.aborted).toBe(true)
  })
})
