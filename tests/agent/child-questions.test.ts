import { describe, expect, it } from 'vitest'
import {
  AgentCall,
  agentCapabilities,
  parseFieldValue,
  samplingRequest,
  samplingResult,
  terminalElicitation,
  workingDirectoryRoots,
  type ChildAnswers,
} from '../../src/agent/child-questions.js'
import type { PrincipalView } from '../../src/principal/view.js'

const view = { serverVisible: (s: string) => s !== 'hidden' } as unknown as PrincipalView
const signal = new AbortController().signal

describe('samplingRequest / samplingResult: MCP sampling over the Messages API', () => {
  it('maps messages, text and images, system prompt, temperature and stop sequences, and caps maxTokens', () => {
    const request = samplingRequest(
      {
        messages: [
          { role: 'user', content: { type: 'text', text: 'What is this?' } },
          { role: 'assistant', content: [{ type: 'text', text: 'Show me.' }] },
          {
            role: 'user',
            content: [
              { type: 'image', data: 'AAAA', mimeType: 'image/png' },
              { type: 'audio', data: 'x', mimeType: 'audio/wav' },
            ],
          },
        ],
        systemPrompt: 'Be brief.',
        maxTokens: 5000,
        temperature: 0.2,
        stopSequences: ['STOP', 7],
      },
      'claude-x',
      512,
    )
    expect(request).toEqual({
      model: 'claude-x',
      max_tokens: 512,
      system: 'Be brief.',
      temperature: 0.2,
      stop_sequences: ['STOP'],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'What is this?' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Show me.' }] },
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
            { type: 'text', text: '[audio content omitted: the model takes text and images]' },
          ],
        },
      ],
    })
    expect(samplingRequest({ messages: [], maxTokens: 10 }, 'm', 512).max_tokens).toBe(10)
    expect(samplingRequest({ messages: [] }, 'm', 512).max_tokens).toBe(512)
  })

  it('answers with the text, the model and the stop reason in MCP’s words', () => {
    expect(
      samplingResult({
        model: 'claude-x',
        stop_reason: 'max_tokens',
        content: [{ type: 'text', text: 'Par' }, { type: 'thinking' }, { type: 'text', text: 'is' }],
      }),
    ).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'Paris' },
      model: 'claude-x',
      stopReason: 'maxTokens',
    })
    expect(samplingResult({ model: 'm', stop_reason: 'end_turn', content: [] })).toMatchObject({
      stopReason: 'endTurn',
      content: { text: '' },
    })
  })
})

describe('parseFieldValue: what a person types, as the field wants it', () => {
  it('takes numbers, whole numbers, yes/no and choices by number or value', () => {
    expect(parseFieldValue({ type: 'number' }, ' 2.5 ')).toEqual({ ok: true, value: 2.5 })
    expect(parseFieldValue({ type: 'integer' }, '2.5')).toEqual({ ok: false, problem: 'type a whole number' })
    expect(parseFieldValue({ type: 'number' }, 'lots')).toEqual({ ok: false, problem: 'type a number' })
    expect(parseFieldValue({ type: 'boolean' }, 'Yes')).toEqual({ ok: true, value: true })
    expect(parseFieldValue({ type: 'boolean' }, 'maybe')).toMatchObject({ ok: false })
    expect(parseFieldValue({ type: 'string', enum: ['red', 'green'] }, '2')).toEqual({ ok: true, value: 'green' })
    expect(parseFieldValue({ type: 'string', oneOf: [{ const: 'a', title: 'A' }] }, 'a')).toEqual({
      ok: true,
      value: 'a',
    })
    expect(parseFieldValue({ type: 'string', enum: ['red'] }, 'blue')).toEqual({
      ok: false,
      problem: 'choose one of 1) red',
    })
    expect(parseFieldValue({ type: 'string' }, ' as typed ')).toEqual({ ok: true, value: ' as typed ' })
  })
})

describe('terminalElicitation: a form asked through the chat’s prompt', () => {
  const scripted = (replies: string[]) => {
    const asked: string[] = []
    return { asked, ask: async (q: string) => (asked.push(q), replies.shift() ?? '') }
  }
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', title: 'Name' },
      age: { type: 'integer' },
      colour: { type: 'string', enum: ['red', 'blue'], default: 'red' },
    },
    required: ['name', 'age'],
  }

  it('asks each field, asks again what does not parse, and takes defaults for skipped ones', async () => {
    const lines: string[] = []
    const { ask, asked } = scripted(['y', 'Ada', 'old', '36', ''])
    const result = await terminalElicitation(ask, (l) => lines.push(l))(
      'people',
      { message: 'Who are you?', requestedSchema: schema },
      signal,
    )
    expect(result).toEqual({ action: 'accept', content: { name: 'Ada', age: 36, colour: 'red' } })
    expect(lines[0]).toBe('[people] asks: Who are you?')
    expect(lines).toContain('  type a number')
    expect(asked.filter((q) => q.includes('age'))).toHaveLength(2)
  })

  it('declines or cancels without asking the fields', async () => {
    expect(
      await terminalElicitation(scripted(['n']).ask, () => {})('s', { message: 'm', requestedSchema: schema }, signal),
    ).toEqual({ action: 'decline' })
    expect(
      await terminalElicitation(scripted(['?', 'c']).ask, () => {})(
        's',
        { message: 'm', requestedSchema: schema },
        signal,
      ),
    ).toEqual({ action: 'cancel' })
  })
})

describe('AgentCall: one tool call of the agent, answering its children', () => {
  const answers: ChildAnswers = {
    roots: workingDirectoryRoots('/work/x'),
    sample: async () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }),
  }

  it('offers what it can answer, and answers it during its own call', async () => {
    expect(agentCapabilities(answers)).toEqual({ roots: {}, sampling: {} })
    expect(agentCapabilities({ ...answers, elicit: async () => ({ action: 'cancel' }) })).toEqual({
      roots: {},
      sampling: {},
      elicitation: { form: {} },
    })
    const call = new AgentCall(view, answers, 'c1')
    const id = call.origin.requestId
    expect(await call.forwardRequest('s', 'roots/list', {}, signal, id)).toEqual({
      roots: [{ uri: 'file:///work/x', name: 'working directory' }],
    })
    expect(
      await call.forwardRequest('s', 'sampling/createMessage', { messages: [], maxTokens: 5 }, signal, id),
    ).toMatchObject({ content: { text: 'hi' } })
  })

  it('refuses what it does not offer, and anything outside its call', async () => {
    const call = new AgentCall(view, answers, 'c2')
    await expect(
      call.forwardRequest('s', 'elicitation/create', { message: 'm' }, signal, call.origin.requestId),
    ).rejects.toThrow(/does not offer elicitation/)
    await expect(call.forwardRequest('s', 'roots/list', {}, signal)).rejects.toThrow(/only during its own tool call/)
    await expect(call.forwardRequest('s', 'roots/list', {}, signal, 'agent:other')).rejects.toThrow(
      /only during its own tool call/,
    )
    expect(call.canAnswer()).toBe(false)
    expect(call.reaches('hidden')).toBe(false)
  })
})
