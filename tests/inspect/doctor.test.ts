import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runDoctor, type DoctorCheck } from '../../src/inspect/doctor.js'
import { createLogger } from '../../src/logger.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import { freePort } from '../helpers/http.js'
import { hasRedis, startRedis } from '../helpers/redis.js'

/** A config file in a folder of its own (no skills: open mode). */
function config(raw: Record<string, unknown>): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-doctor-')), 'mycelium.config.json')
  writeFileSync(file, JSON.stringify({ mcpServers: {}, ...raw }))
  return file
}

/** The environment of a doctor run: its own user config folder (OAuth logins) and key, nothing from this process's. */
function environment(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    XDG_CONFIG_HOME: mkdtempSync(path.join(tmpdir(), 'myc-doctor-home-')),
    MYC_TOKEN_KEY: Buffer.alloc(32, 7).toString('base64'),
    ...extra,
  }
}

async function doctor(raw: Record<string, unknown>, env = environment()): Promise<Map<string, DoctorCheck>> {
  const { checks } = await runDoctor({ configPath: config(raw), logger: createLogger({ quiet: true }), env })
  return new Map(checks.map((c) => [c.name, c]))
}

describe('myc doctor checks what myc serve --http needs', () => {
  it('a token whose variable is unset fails, naming the variable (serve --http would exit 2); set, it passes', async () => {
    const http = { listen: '127.0.0.1:0', tokens: [{ env: 'MYC_DOCTOR_TOKEN' }] }
    const unset = (await doctor({ http })).get('serve --http')!
    expect(unset).toMatchObject({ status: 'fail' })
    expect(unset.detail).toMatch(/http\.tokens\[0\]\.env: environment variable MYC_DOCTOR_TOKEN is not set/)
    const set = (await doctor({ http }, environment({ MYC_DOCTOR_TOKEN: 'a-long-random-token' }))).get('serve --http')!
    expect(set).toMatchObject({ status: 'ok', detail: '127.0.0.1:0, 1 token, each variable set' })
  })

  it('a non-loopback address without tokens fails as serve refuses it', async () => {
    const check = (await doctor({ http: { listen: '0.0.0.0:0' } })).get('serve --http')!
    expect(check.status).toBe('fail')
    expect(check.detail).toMatch(/not a loopback address/)
  })

  describe('listen addresses', () => {
    const held: Server[] = []
    afterAll(() => held.forEach((s) => s.close()))

    it('free: ok; in use: a warning saying so; not this machine’s: a failure', async () => {
      const port = await freePort()
      expect((await doctor({ http: { listen: `127.0.0.1:${port}` } })).get('http.listen')).toMatchObject({
        status: 'ok',
      })
      const server = createServer()
      held.push(server)
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
      const inUse = (await doctor({ http: { listen: `127.0.0.1:${port}` } })).get('http.listen')!
      expect(inUse).toMatchObject({ status: 'warn' })
      expect(inUse.detail).toContain(`127.0.0.1:${port} is in use now`)
      // 192.0.2.1 (TEST-NET-1) is no address of this machine; metricsListen is checked the same way.
      const foreign = await doctor({
        http: { listen: '127.0.0.1:0', metricsListen: '192.0.2.1:9464', metricsToken: { env: 'M' } },
      })
      expect(foreign.get('http.metricsListen')).toMatchObject({ status: 'fail' })
      expect(foreign.get('http.metricsListen')!.detail).toMatch(/cannot listen on 192\.0\.2\.1:9464: EADDRNOTAVAIL/)
    })
  })

  describe.runIf(hasRedis())('the Redis of http.sessionStore', () => {
    it('answers: ok; nothing there: a failure naming the URL, within the short timeout', async () => {
      const redis = await startRedis()
      try {
        const env = environment({ MYC_SESSION_SECRET: 'x'.repeat(40) })
        const up = await doctor({ http: { listen: '127.0.0.1:0', sessionStore: redis.url } }, env)
        expect(up.get('http.sessionStore')).toMatchObject({ status: 'ok', detail: `${redis.url} answers` })
      } finally {
        await redis.stop()
      }
      const port = await freePort()
      const down = await doctor({ http: { listen: '127.0.0.1:0', sessionStore: `redis://127.0.0.1:${port}` } })
      expect(down.get('http.sessionStore')).toMatchObject({ status: 'fail' })
      expect(down.get('http.sessionStore')!.detail).toMatch(
        new RegExp(`^cannot reach Redis at redis://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
      )
    })
  })

  it('NODE_EXTRA_CA_CERTS that cannot be read: a warning (Node ignores it)', async () => {
    const checks = await doctor({}, environment({ NODE_EXTRA_CA_CERTS: '/nonexistent/ca.pem' }))
    expect(checks.get('NODE_EXTRA_CA_CERTS')).toMatchObject({ status: 'warn' })
    expect(checks.get('NODE_EXTRA_CA_CERTS')!.detail).toMatch(/^\/nonexistent\/ca\.pem cannot be read \(ENOENT\)/)
  })

  it('a server with an oauth key: no login stored warns with the login command; a stored one passes', async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    const raw = { mcpServers: { gh: { type: 'http', url, oauth: {}, restart: { maxRetries: 0 } } } }
    const env = environment()
    const none = (await doctor(raw, env)).get('login gh')!
    expect(none).toMatchObject({ status: 'warn', detail: `no login stored for ${url}` })
    expect(none.fix).toMatch(/^run `myc auth login gh`/)
    await TokenStore.forUser(undefined, env).put(url, {
      serverUrl: url,
      tokens: { access_token: 'at', token_type: 'Bearer', refresh_token: 'rt' },
      expiresAt: Date.now() + 3_600_000,
      client: { client_id: 'c' },
      authorizationServerUrl: `http://127.0.0.1:${port}`,
      resource: url,
      savedAt: Date.now(),
    })
    expect((await doctor(raw, env)).get('login gh')).toMatchObject({ status: 'ok' })
  })
})

describe('myc doctor checks only the executors that apply here', () => {
  it.runIf(process.platform === 'linux')(
    'on Linux with executor auto: bubblewrap alone, never sandbox-exec or docker',
    async () => {
      const names = [...(await doctor({})).keys()].filter((n) => n.startsWith('executor') || n === 'sandbox')
      expect(names).toEqual(['executor bubblewrap'])
    },
  )

  it('docker only when configured; none with trust unrestricted', async () => {
    const docker = [...(await doctor({ sandbox: { executor: 'docker' } })).keys()].filter((n) =>
      n.startsWith('executor'),
    )
    expect(docker).toEqual(['executor docker'])
    const unrestricted = await doctor({ sandbox: { trust: 'unrestricted' } })
    expect([...unrestricted.keys()].filter((n) => n.startsWith('executor'))).toEqual([])
    expect(unrestricted.get('sandbox')).toMatchObject({ status: 'ok' })
  })
})
