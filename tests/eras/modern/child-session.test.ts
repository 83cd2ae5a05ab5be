import { describe, expect, it } from 'vitest'
import { childMeta, inputRequiredError, isCredentialKey } from '../../../src/eras/modern/child-session.js'

const MATERIAL = {
  protocolVersion: '2026-07-28',
  clientInfo: { name: 'mycelium', version: '1' },
  clientCapabilities: { elicitation: {} },
}

describe('the envelope a modern child gets', () => {
  it('keeps the caller’s trace context and vendor keys, replaces its envelope, drops credentials', () => {
    const meta = childMeta(
      {
        traceparent: 't',
        tracestate: 's',
        baggage: 'b',
        'com.example/tenant': 'blue',
        progressToken: 7,
        'io.modelcontextprotocol/clientInfo': { name: 'impostor' },
        'io.modelcontextprotocol/logLevel': 'debug',
        authorization: 'Bearer x',
        Authorization: 'Bearer y',
        'com.example/apiKey': 'k',
        'x-api-key': 'k',
        accessToken: 'a',
        refresh_token: 'r',
        'com.example/secret': 's',
        password: 'p',
        cookie: 'c',
        sessionId: 'sid',
        author: 'kept: not a credential',
      },
      MATERIAL,
      'warning',
    )
    expect(meta).toEqual({
      traceparent: 't',
      tracestate: 's',
      baggage: 'b',
      'com.example/tenant': 'blue',
      progressToken: 7,
      author: 'kept: not a credential',
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'mycelium', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
      'io.modelcontextprotocol/logLevel': 'warning',
    })
    expect(childMeta(undefined, MATERIAL, undefined)).not.toHaveProperty(['io.modelcontextprotocol/logLevel'])
    for (const key of ['token', 'idToken', 'bearer', 'credentials', 'session_id'])
      expect(isCredentialKey(key), key).toBe(true)
    for (const key of ['progressToken', 'tokens_used', 'authority', 'traceparent'])
      expect(isCredentialKey(key), key).toBe(false)
  })

  it('names what an input_required result asked for', () => {
    const error = inputRequiredError('gh', 'tools/call', {
      resultType: 'input_required',
      inputRequests: {
        a: { method: 'elicitation/create', params: {} },
        b: { method: 'sampling/createMessage', params: {} },
      },
    })
    expect(error.code).toBe(-32603)
    expect(error.message).toMatch(
      /Server "gh" \(MCP 2026-07-28\) asked for input \(elicitation\/create, sampling\/createMessage\) to answer tools\/call/,
    )
  })
})
