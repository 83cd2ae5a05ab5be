import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { npmServer } from '../helpers/e2e.js'
import { fixtureEntry, startRuntime } from '../helpers/runtime.js'

describe('era negotiation with each kind of child (era: auto)', () => {
  it('initializes a 2025 server that answers, ignores or dies of the probe, and speaks 2026-07-28 to a modern one', async () => {
    const spawns = path.join(mkdtempSync(path.join(tmpdir(), 'myc-era-')), 'spawns.log')
    const runtime = await startRuntime({
      mcpServers: {
        modern: fixtureEntry('modern-echo', { era: 'auto' }),
        echo: fixtureEntry('echo', { era: 'auto' }),
        exits: fixtureEntry('strict-legacy', { env: { STRICT_LEGACY_LOG: spawns }, era: 'auto' }),
        // Half of startupTimeoutMs bounds the probe: this one waits 2 s, then initializes.
        silent: fixtureEntry('strict-legacy', {
          env: { STRICT_LEGACY: 'silent' },
          startupTimeoutMs: 4_000,
          era: 'auto',
        }),
        // No era key: the default (legacy) initializes even a server that speaks 2026-07-28.
        plain: fixtureEntry('modern-echo'),
        pinned: fixtureEntry('echo', { era: 'modern', startupTimeoutMs: 20_000, restart: { maxRetries: 0 } }),
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
