import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, runMyc, writeConfig } from '../helpers/e2e.js'
import { connectHttp, startHttpMyc, type HttpMyc } from '../helpers/http.js'
import { callbackCode, startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.js'

const TOKENS = {
  MYC_E2E_RP_ALICE: 'alice-rp-0123456789abcdef0123456789abcdef',
  MYC_E2E_RP_BOB: 'bob-rp-0123456789abcdef0123456789abcdef01',
}
const SHARED = {
  MYC_SESSION_SECRET: 'replicas-share-this-0123456789abcdef0123456789',
  MYC_TOKEN_KEY: Buffer.alloc(32, 7).toString('base64'),
}

const whoami = (result: { content?: unknown }) => (result.content as Array<{ text: string }>)[0]!.text

/**
 * Two `myc serve --http` replicas on one real Redis: a person who logs in
 * through one replica calls as themselves through the other (their tokens
 * sealed in Redis with MYC_TOKEN_KEY, no token text there), and a replica
 * refuses to start with Redis and per-person logins but no MYC_TOKEN_KEY.
 */
describe.skipIf(!hasRedis())('per-person OAuth logins shared by replicas through Redis (build/myc.cjs)', () => {
  let redis: RedisServer
  let server: OAuthTestServer
  let config: string
  let env: Record<string, string>
  let a: HttpMyc
  let b: HttpMyc
  const open: Client[] = []

  beforeAll(async () => {
    requireBundle()
    redis = await startRedis()
    server = await startOAuthServer()
    // Each replica on a machine of its own: its own config folder, so only Redis can carry a login from one to the other.
    const homeOf = () => mkdtempSync(path.join(tmpdir(), 'myc-rp-home-'))
    const [homeA, homeB] = [homeOf(), homeOf()]
    env = { XDG_CONFIG_HOME: path.join(homeA, 'config'), HOME: homeA, ...TOKENS, ...SHARED }
    const envB = { ...env, XDG_CONFIG_HOME: path.join(homeB, 'config'), HOME: homeB }
    config = writeConfig({
      mcpServers: { gh: { type: 'http', url: server.mcpUrl, oauth: {} } },
      roles: { default: 'person' },
      session: { defaultSkills: ['remote'] },
      http: {
        sessionStore: redis.url,
        tokens: [
          { env: 'MYC_E2E_RP_ALICE', role: 'person', name: 'alice' },
          { env: 'MYC_E2E_RP_BOB', role: 'person', name: 'bob' },
        ],
      },
    })
    mkdirSync(path.join(path.dirname(config), 'skills', 'remote'), { recursive: true })
    writeFileSync(
      path.join(path.dirname(config), 'skills', 'remote', 'SKILL.md'),
      '---\nname: remote\ndescription: The remote server\nallowedRoles: [person]\nallowedTools: ["gh:*"]\n---\nUse it.\n',
    )
    // The operator's own login lists the tools, on each replica's machine.
    const operator = (on: Record<string, string>) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [bundle, 'auth', 'login', 'gh', '--no-browser', '--config', config], {
          env: { ...process.env, ...on },
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        child.stdout.once(
          'data',
          (chunk: Buffer) => void fetch(chunk.toString().trim(), { redirect: 'follow' }).catch(() => {}),
        )
        child.once('close', resolve)
      })
    expect(await operator(env)).toBe(0)
    expect(await operator(envB)).toBe(0)
    ;[a, b] = await Promise.all([startHttpMyc(config, { env }), startHttpMyc(config, { env: envB })])
  }, 60_000)
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => {})))
    await Promise.all([a?.stop(), b?.stop()])
    await server?.close()
    await redis?.stop()
  })

  it('alice logs in through replica a and calls as herself through replica b; bob, not logged in, is told the way in', async () => {
    const started = await fetch(`${a.base}/oauth/login/gh`, {
      headers: { Authorization: `Bearer ${TOKENS.MYC_E2E_RP_ALICE}`, Accept: 'application/json' },
    })
    expect(started.status).toBe(200)
    const landed = await fetch(((await started.json()) as { authorizationUrl: string }).authorizationUrl, {
      redirect: 'follow',
    })
    expect(landed.status).toBe(200)
    // Finished where it was started: the login under way lives in that replica's memory.
    const code = callbackCode(await landed.text())
    const finished = await fetch(`${a.base}/oauth/login/gh?code=${code}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKENS.MYC_E2E_RP_ALICE}` },
    })
    expect(finished.status).toBe(200)
    const { client: onB } = await connectHttp(b.url, { token: TOKENS.MYC_E2E_RP_ALICE })
    open.push(onB)
    expect(whoami(await onB.callTool({ name: 'gh__whoami', arguments: {} }))).toMatch(
      /^you are logged in \(login (?![12]\))\d+\)$/,
    )
    const { client: bobOnB } = await connectHttp(b.url, { token: TOKENS.MYC_E2E_RP_BOB })
    open.push(bobOnB)
    expect(whoami(await bobOnB.callTool({ name: 'gh__whoami', arguments: {} }))).toMatch(/needs your own OAuth login/)
  }, 60_000)

  it('Redis holds the sealed logins and no token text', () => {
    const port = new URL(redis.url).port
    const dump = spawnSync('redis-cli', ['--raw', '-p', port, 'HGETALL', 'myc:oauth:tokens'], { encoding: 'utf8' })
    expect(dump.status).toBe(0)
    const lines = dump.stdout.split('\n').filter(Boolean)
    // alice's login: one field (a keyed digest) whose value is a sealed entry.
    expect(lines.length).toBeGreaterThanOrEqual(2)
    expect(Object.keys(JSON.parse(lines[1]!) as object).sort()).toEqual(['data', 'iv', 'tag'])
    for (const token of server.issued) expect(dump.stdout).not.toContain(token)
  })

  it('a replica with Redis and per-person logins but no MYC_TOKEN_KEY does not start, and says why', () => {
    const { MYC_TOKEN_KEY: _key, ...withoutKey } = env
    const refused = runMyc(['serve', '--http', '127.0.0.1:0', '--config', config], undefined, { env: withoutKey })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/MYC_TOKEN_KEY/)
  })
})
