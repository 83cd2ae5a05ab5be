import { describe, expect, it } from 'vitest'
import {
  bridgeFailure,
  MAX_INPUT_ROUNDS,
  neededCapability,
  planRound,
  retryParams,
  runInputBridge,
} from '../../../src/eras/modern/input-bridge.js'
import type { InputSource } from '../../../src/children/child-session.js'
import type { RelayOutcome } from '../../../src/protocol/request-relay.js'

const elicit = (message: string) => ({
  method: 'elicitation/create',
  params: { message, requestedSchema: { type: 'object', properties: {} } },
})
const inputRequired = (inputRequests: Record<string, unknown> | undefined, requestState?: string) => ({
  resultType: 'input_required',
  ...(inputRequests ? { inputRequests } : {}),
  ...(requestState ? { requestState } : {}),
})

describe('planRound: a modern child’s input requests as 2025 requests to the client', () => {
  it('keeps the child’s keys and params, and asks only what the client declared', () => {
    const caps = { elicitation: {}, sampling: {}, roots: {} }
    const plan = planRound(
      inputRequired(
        {
          colour: elicit('Colour?'),
          model: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
          where: { method: 'roots/list' },
        },
        's1',
      ),
      caps,
    )
    expect(plan).toEqual({
      kind: 'ask',
      requestState: 's1',
      asks: [
        { key: 'colour', method: 'elicitation/create', params: elicit('Colour?').params },
        { key: 'model', method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } },
        { key: 'where', method: 'roots/list', params: {} },
      ],
    })
  })

  it('names the capability a client lacks', () => {
    expect(planRound(inputRequired({ c: elicit('?') }), {})).toEqual({
      kind: 'missing',
      key: 'c',
      method: 'elicitation/create',
      capability: 'elicitation',
    })
    expect(planRound(inputRequired({ c: elicit('?') }), undefined)).toMatchObject({
      kind: 'missing',
      capability: 'elicitation',
    })
    expect(
      planRound(
        inputRequired({ s: { method: 'sampling/createMessage', params: { messages: [], maxTokens: 1, tools: [] } } }),
        { sampling: {} },
      ),
    ).toMatchObject({ kind: 'missing', capability: 'sampling.tools' })
    expect(planRound(inputRequired({ r: { method: 'roots/list' } }), { sampling: {} })).toMatchObject({
      kind: 'missing',
      capability: 'roots',
    })
    expect(
      planRound(
        inputRequired({ u: { method: 'elicitation/create', params: { mode: 'url', url: 'https://x', message: 'm' } } }),
        { elicitation: { form: {} } },
      ),
    ).toMatchObject({ kind: 'missing', capability: 'elicitation.url' })
  })

  it('reads a bare elicitation capability as form mode, and gives URL mode the elicitationId 2025 requires', () => {
    expect(neededCapability('elicitation/create', {}, { elicitation: {} })).toEqual({
      name: 'elicitation',
      declared: true,
    })
    expect(neededCapability('elicitation/create', {}, { elicitation: { url: {} } })).toEqual({
      name: 'elicitation',
      declared: false,
    })
    const plan = planRound(
      inputRequired({ u: { method: 'elicitation/create', params: { mode: 'url', url: 'https://x', message: 'm' } } }),
      { elicitation: { url: {} } },
    )
    expect(plan.kind === 'ask' && typeof plan.asks[0]!.params.elicitationId).toBe('string')
  })

  it('refuses what is not an input request, and a result with nothing in it', () => {
    expect(planRound(inputRequired({ x: { method: 'tools/call', params: {} } }), { elicitation: {} })).toMatchObject({
      kind: 'invalid',
    })
    expect(planRound(inputRequired({ x: 'no' }), {})).toMatchObject({ kind: 'invalid' })
    expect(planRound(inputRequired(undefined), {})).toMatchObject({ kind: 'invalid' })
    expect(planRound(inputRequired(undefined, 'only-state'), {})).toEqual({
      kind: 'ask',
      asks: [],
      requestState: 'only-state',
    })
  })
})

describe('retryParams: the answers as inputResponses', () => {
  it('keys the bare answers as asked and echoes requestState; the caller’s own retry fields are replaced', () => {
    const original = {
      name: 'ask',
      arguments: { a: 1 },
      _meta: { traceparent: 't' },
      inputResponses: { forged: {} },
      requestState: 'forged',
    }
    expect(retryParams(original, [['colour', { action: 'accept', content: { colour: 'teal' } }]], 'state-2')).toEqual({
      name: 'ask',
      arguments: { a: 1 },
      _meta: { traceparent: 't' },
      inputResponses: { colour: { action: 'accept', content: { colour: 'teal' } } },
      requestState: 'state-2',
    })
    expect(retryParams({ name: 'ask' }, [], 's')).toEqual({ name: 'ask', requestState: 's' })
  })

  it('answers a failure per family: an isError result for tools/call, -32603 otherwise', () => {
    expect(bridgeFailure('tools/call', 'no', {})).toEqual({
      ok: true,
      result: { content: [{ type: 'text', text: 'no' }], isError: true },
    })
    expect(bridgeFailure('prompts/get', 'no', { a: 1 })).toEqual({
      ok: false,
      error: { code: -32603, message: 'no', data: { a: 1 } },
    })
  })
})

describe('runInputBridge', () => {
  const source = (
    answer: (
      method: string,
      params: Record<string, unknown>,
    ) => Promise<Record<string, unknown>> | Record<string, unknown>,
    caps: Record<string, unknown> = { elicitation: {} },
  ): InputSource & { asked: string[] } => {
    const asked: string[] = []
    return {
      asked,
      capabilities: caps,
      ask: async (method, params) => {
        asked.push(String(params.message ?? method))
        return answer(method, params)
      },
    }
  }
  const base = {
    server: 'm',
    method: 'tools/call',
    params: { name: 'ask' },
    signal: new AbortController().signal,
    timeoutMs: 10_000,
  }

  it('asks the client each round and retries until a final result', async () => {
    const retries: Array<Record<string, unknown>> = []
    const src = source(() => ({ action: 'accept', content: { v: 'x' } }))
    const outcome = await runInputBridge({
      ...base,
      first: inputRequired({ a: elicit('first?') }, 'r1'),
      source: src,
      retry: async (params) => {
        retries.push(params)
        return retries.length === 1
          ? { ok: true, result: inputRequired({ b: elicit('second?') }, 'r2') }
          : { ok: true, result: { content: [{ type: 'text', text: 'done' }] } }
      },
    })
    expect(outcome).toEqual({ ok: true, result: { content: [{ type: 'text', text: 'done' }] } })
    expect(src.asked).toEqual(['first?', 'second?'])
    expect(retries).toEqual([
      { name: 'ask', inputResponses: { a: { action: 'accept', content: { v: 'x' } } }, requestState: 'r1' },
      { name: 'ask', inputResponses: { b: { action: 'accept', content: { v: 'x' } } }, requestState: 'r2' },
    ])
  })

  it(`stops after ${MAX_INPUT_ROUNDS} rounds`, async () => {
    let retries = 0
    const outcome = await runInputBridge({
      ...base,
      first: inputRequired({ a: elicit('?') }),
      source: source(() => ({ action: 'decline' })),
      retry: async () => (retries++, { ok: true, result: inputRequired({ a: elicit('?') }) }),
    })
    expect(retries).toBe(MAX_INPUT_ROUNDS)
    expect(outcome.ok && outcome.result.isError).toBe(true)
    expect(JSON.stringify(outcome)).toMatch(/after 8 rounds/)
  })

  it('answers a client without the capability at once, naming it, and never retries', async () => {
    let retries = 0
    const outcome = await runInputBridge({
      ...base,
      method: 'prompts/get',
      first: inputRequired({ a: elicit('?') }),
      source: source(() => ({}), {}),
      retry: async () => (retries++, { ok: true, result: {} }),
    })
    expect(retries).toBe(0)
    expect(outcome).toMatchObject({ ok: false, error: { code: -32603, data: { missingCapability: 'elicitation' } } })
    expect((outcome as { error: { message: string } }).error.message).toMatch(
      /did not declare the elicitation capability/,
    )
  })

  it('a client’s failed answer fails the call; a cancelled call sends the child nothing more', async () => {
    const failed = await runInputBridge({
      ...base,
      first: inputRequired({ a: elicit('?') }),
      source: source(() => Promise.reject(new Error('user closed the dialog'))),
      retry: async () => ({ ok: true, result: {} }),
    })
    expect(JSON.stringify(failed)).toMatch(/user closed the dialog/)
    const abort = new AbortController()
    let retries = 0
    const pending = runInputBridge({
      ...base,
      signal: abort.signal,
      first: inputRequired({ a: elicit('?') }),
      source: {
        capabilities: { elicitation: {} },
        ask: (_m, _p, signal) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
      },
      retry: async () => (retries++, { ok: true, result: {} }),
    })
    abort.abort('cancelled by the client')
    expect(await pending).toMatchObject({ ok: false, error: { code: -32800 } })
    expect(retries).toBe(0)
  })

  it('the call’s deadline covers the client’s answers', async () => {
    const outcome: RelayOutcome = await runInputBridge({
      ...base,
      timeoutMs: 100,
      first: inputRequired({ a: elicit('?') }),
      source: {
        capabilities: { elicitation: {} },
        ask: (_m, _p, signal) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
      },
      retry: async () => ({ ok: true, result: {} }),
    })
    expect(outcome).toMatchObject({ ok: false, error: { code: -32001 } })
  })
})
