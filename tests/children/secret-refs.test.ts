import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { hasSecretRefs, MissingSecretError, missingSecretIn, withSecrets } from '../../src/children/secret-refs.js'
import { PrespawnedChildren } from '../../src/children/prespawn.js'
import type { ServerConfig } from '../../src/config/server-schema.js'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { captureLogger, connectClient, fixtureEntry, loadedConfig } from '../helpers/runtime.js'
import { childSessions } from '../../src/eras/child-sessions.js'

const KEY = Buffer.alloc(32, 5).toString('base64')

describe('${secret:NAME} in a config', () => {
  it('is refused outside env, headers and args, and with a malformed name', () => {
    expect(() =>
      loadedConfig({
        mcpServers: { a: { command: '${secret:a.CMD}' }, b: { url: 'https://x.example/${secret:b.U}' } },
      }),
    ).toThrow(/mcpServers\.a\.command: \$\{secret:a\.CMD\} stands only in[^\n]*\n\s*mcpServers\.b\.url/)
    expect(() => loadedConfig({ mcpServers: { a: { command: 'x', env: { K: '${secret:bad name}' } } } })).toThrow(
      /mcpServers\.a\.env\.K: \$\{secret:bad name\}: a secret's name is letters/,
    )
  })

  it('stays as written in the loaded config (expansion leaves it), in env, headers and args', () => {
    const loaded = loadedConfig({
      mcpServers: {
        a: { command: 'x', args: ['--token=${secret:a.T}'], env: { K: 'pre-${secret:a.K}' } },
        b: { url: 'https://x.example/mcp', headers: { Authorization: 'Bearer ${secret:b.H}' } },
        c: { command: 'x', env: { K: '${HOME}' } },
      },
    })
    const [a, b, c] = ['a', 'b', 'c'].map((k) => loaded.config.servers.get(k)!)
    expect(a).toMatchObject({ args: ['--token=${secret:a.T}'], env: { K: 'pre-${secret:a.K}' } })
    expect(b).toMatchObject({ headers: { Authorization: 'Bearer ${secret:b.H}' } })
    expect([a, b, c].map((s) => hasSecretRefs(s!))).toEqual([true, true, false])
  })
})

describe('withSecrets', () => {
  const entry = {
    type: 'stdio',
    command: 'x',
    args: ['--token=${secret:a.T}', 'plain'],
    env: { K: 'pre-${secret:a.K}', L: 'as is' },
  } as unknown as ServerConfig
  const values = new Map([
    ['a.T', 'tee'],
    ['a.K', 'kay'],
  ])

  it('names every secret that is not kept, and the fix; never a value', async () => {
    const error = await withSecrets(entry, async (n) => (n === 'a.T' ? 'tee' : undefined)).catch((e: Error) => e)
    expect(String(error)).toMatch(/secret "a\.K" not kept on this machine.*run myc add.*export the variable/)
    expect(String(error)).not.toContain('tee')
  })

  it('fills args and env (headers for an HTTP server), leaving the entry as configured untouched', async () => {
    const filled = await withSecrets(entry, async (n) => values.get(n))
    expect(filled).toMatchObject({ args: ['--token=tee', 'plain'], env: { K: 'pre-kay', L: 'as is' } })
    expect(entry).toMatchObject({ args: ['--token=${secret:a.T}', 'plain'] })
    const http = {
      type: 'http',
      url: 'https://x/mcp',
      headers: { A: 'Bearer ${secret:a.T}' },
    } as unknown as ServerConfig
    expect(await withSecrets(http, async (n) => values.get(n))).toMatchObject({ headers: { A: 'Bearer tee' } })
  })
})

describe('withSecrets and a person’s own secrets ({ "secret": "NAME" })', () => {
  const scoped = {
    type: 'stdio',
    command: 'x',
    args: ['--k=${secret:m.K}'],
    env: { TOKEN: { secret: 'github' }, OTHER: { secret: 'api' }, PLAIN: 'p' },
  } as unknown as ServerConfig
  const person = (kept: Record<string, string>) => ({
    person: 'alice',
    lookup: async (n: string) => kept[n],
    fix: (n: string) => `myc secrets set ${n} --principal alice`,
  })

  it('fills them from the person’s secrets, after this machine’s, never reading a person’s value for references', async () => {
    const filled = await withSecrets(
      scoped,
      async (n) => (n === 'm.K' ? 'machine' : 'operator-only'),
      person({
        github: 'ghp_alice',
        api: '${secret:m.K}',
      }),
    )
    expect(filled).toMatchObject({
      args: ['--k=machine'],
      env: { TOKEN: 'ghp_alice', OTHER: '${secret:m.K}', PLAIN: 'p' },
    })
  })

  it('names every secret the person has not kept, and how to set it: a MissingSecretError, no value', async () => {
    const error = await withSecrets(scoped, async () => 'machine', person({ api: 'a' })).catch((e: unknown) => e)
    expect(missingSecretIn(error)).toBeInstanceOf(MissingSecretError)
    expect(String(error)).toMatch(
      /needs the secret "github" of alice, and none is kept: myc secrets set github --principal alice/,
    )
    expect(String(error)).not.toContain('machine')
  })

  it('refuses to fill them for no one (a process that runs for nobody)', async () => {
    await expect(withSecrets(scoped, async () => 'machine')).rejects.toThrow(/this process runs for no one/)
  })
})

describe('a child whose entry names a sealed secret', () => {
  it('gets the value from the secret store when it starts; its config and the early start never hold it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-secret-child-'))
    const env = { ...process.env, XDG_CONFIG_HOME: dir, MYC_TOKEN_KEY: KEY }
    await SecretStore.forUser(env).keep('rep.API_KEY', 'the-sealed-value')
    const loaded = loadedConfig({
      mcpServers: {
        rep: fixtureEntry('reports-env', {
          args: [fixtureEntryArgs(), '--key=${secret:rep.API_KEY}'],
          env: { REPORTS_NEEDS: 'API_KEY', API_KEY: '${secret:rep.API_KEY}' },
        }),
      },
    })
    expect(PrespawnedChildren.start(loaded, hostForThisProcess()).size).toBe(0)
    const { logger } = captureLogger()
    const runtime = new Runtime({
      childSessions,
      loaded,
      logger,
      version: '0',
      host: { ...hostForThisProcess(), env },
    })
    try {
      await runtime.start()
      const { client } = await connectClient(runtime)
      const result = await client.callTool({ name: 'rep__report', arguments: {} })
      const text = (result.content as { text: string }[])[0]!.text
      expect(JSON.parse(text)).toEqual({ args: ['--key=the-sealed-value'], env: { API_KEY: 'the-sealed-value' } })
      expect(JSON.stringify([...runtime.loaded.config.servers])).not.toContain('the-sealed-value')
    } finally {
      await runtime.close()
    }
  })

  it('fails to start naming the secret when this machine does not keep it', async () => {
    const env = {
      ...process.env,
      XDG_CONFIG_HOME: mkdtempSync(path.join(tmpdir(), 'myc-secret-none-')),
      MYC_TOKEN_KEY: KEY,
    }
    const loaded = loadedConfig({
      mcpServers: {
        rep: fixtureEntry('reports-env', { env: { API_KEY: '${secret:rep.API_KEY}' }, restart: { maxRetries: 0 } }),
      },
    })
    const { logger } = captureLogger()
    const runtime = new Runtime({
      childSessions,
      loaded,
      logger,
      version: '0',
      host: { ...hostForThisProcess(), env },
    })
    try {
      await runtime.start().catch(() => {})
      const child = runtime.supervisor.children.get('rep')!
      expect(child.state).toBe('FAILED')
      expect(child.lastError).toMatch(/secret "rep\.API_KEY" not kept on this machine/)
    } finally {
      await runtime.close()
    }
  })
})

/** The fixture's script path (the first argument of its entry). */
function fixtureEntryArgs(): string {
  return (fixtureEntry('reports-env').args as string[])[0]!
}
