import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { childMeta, inputRequiredError, isCredentialKey } from '../../../src/eras/child/era.js'
import { npmServer } from '../../helpers/e2e.js'
import { fixtureEntry, startRuntime } from '../../helpers/runtime.js'

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

describe('era negotiation with each kind of child (era: auto)', () => {
  it('initializes a 2025 server that answers, ignores or dies of the probe, and speaks 2026-07-28 to a modern one', async () => {
    const spawns = path.join(mkdtempSync(path.join(tmpdir(), 'myc-era-')), 'spawns.log')
    const runtime = await startRuntime({
      mcpServers: {
        modern: fixtureEntry('modern-echo', { era: 'auto' }),
        echo: fixtureEntry('echo', { era: 'auto' }),
        exits: fixtureEntry('strict-legacy', { env: { STRICT_LEGACY_LOG: spawns }, era: 'auto' }),
        // Half of startupTimeoutMs bounds the probe: this one waits 1 s, then initializes.
        silent: fixtureEntry('strict-legacy', {
          env: { STRICT_LEGACY: 'silent' },
          startupTimeoutMs: 2_000,
          era: 'auto',
        }),
        // No era key: the default (legacy) initializes even a server that speaks 2026-07-28.
        plain: fixtureEntry('modern-echo'),
        pinned: fixtureEntry('echo', { era: 'modern', startupTimeoutMs: 2_000, restart: { maxRetries: 0 } }),
      },
    })
    try {
      const child = (key: string) => runtime.supervisor.children.get(key)!
      expect([child('modern').state, child('modern').era, child('modern').protocolVersion]).toEqual([
        'RUNNING',
        'modern',
        '2026-07-28',
      ])
      expect(child('modern').serverInfo).toMatchObject({ name: 'modern-echo' })
      expect([child('plain').state, child('plain').era, child('plain').protocolVersion]).toEqual([
        'RUNNING',
        'legacy',
        '2025-11-25',
      ])
      expect([child('echo').state, child('echo').era, child('echo').protocolVersion]).toEqual([
        'RUNNING',
        'legacy',
        '2025-11-25',
      ])
      expect([child('exits').state, child('exits').era]).toEqual(['RUNNING', 'legacy'])
      expect(readFileSync(spawns, 'utf8').trim().split('\n')).toHaveLength(2)
      expect([child('silent').state, child('silent').era]).toEqual(['RUNNING', 'legacy'])
      expect(child('silent').lists.tools.map((t) => t.name)).toEqual(['hello'])
      // era: "modern" fails loudly against a 2025 server.
      expect(child('pinned').state).toBe('FAILED')
      expect(child('pinned').lastError).toMatch(/2026-07-28/)
      // A restart of the one that died of the probe initializes at once: one spawn more, not two.
      await child('exits').stop()
      await child('exits').start()
      expect(readFileSync(spawns, 'utf8').trim().split('\n')).toHaveLength(3)
    } finally {
      await runtime.close()
    }
  }, 30_000)

  it('starts the reference 1.x-SDK servers in the 2025 era', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-era-ref-'))
    const runtime = await startRuntime({
      mcpServers: {
        everything: { command: process.execPath, args: [npmServer('server-everything'), 'stdio'] },
        memory: {
          command: process.execPath,
          args: [npmServer('server-memory')],
          env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') },
        },
        fs: { command: process.execPath, args: [npmServer('server-filesystem'), dir] },
      },
    })
    try {
      for (const child of runtime.supervisor.children.values()) {
        expect([child.key, child.state, child.era, child.protocolVersion]).toEqual([
          child.key,
          'RUNNING',
          'legacy',
          '2025-11-25',
        ])
        expect(child.lists.tools.length).toBeGreaterThan(0)
      }
    } finally {
      await runtime.close()
    }
  }, 30_000)
})
