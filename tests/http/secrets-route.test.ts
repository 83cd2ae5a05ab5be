import type { Server } from 'node:http'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HttpFace } from '../../src/http/http-face.js'
import { createMetrics, type HttpMetrics } from '../../src/http/metrics.js'
import { MAX_SECRET_BYTES, SECRET_SETS_PER_MINUTE } from '../../src/http/secrets-route.js'
import { readMetricsToken, readTokens } from '../../src/http/bearer-tokens.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { connectHttp, faceOptions, serveFace } from '../helpers/http.js'
import { firstText, PEOPLE, perPersonEntry, scopedRuntime, whoami } from '../helpers/scoped.js'

const UNNAMED = 'unnamed-scoped-0123456789abcdef0123456789'
const SCRAPER = 'scraper-scoped-0123456789abcdef0123456789'
const ENV = { A: PEOPLE.alice, B: PEOPLE.bob, U: UNNAMED, M: SCRAPER }

/**
 * `PUT /secrets/<name>` (`http.selfServiceSecrets`) and `GET /instances`
 * (the metrics credential), in process over real HTTP: a person keeps their
 * own secret with their own credential, never reads one back, at most a few
 * a minute; the operator lists the instances and counts them on /metrics.
 */
describe('a person’s own secrets over HTTP, and the operator’s view of the instances', () => {
  let runtime: Runtime
  let metrics: HttpMetrics
  let base: string
  let offBase: string
  const servers: Server[] = []
  const open: Client[] = []
  const put = (name: string, body: string, token?: string, at = base) =>
    fetch(`${at}/secrets/${name}`, {
      method: 'PUT',
      body,
      headers: token ? { Authorization: `Bearer ${token}` } : {},
    })

  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime({ gh: perPersonEntry() }, { kept: { local: { github: 'operator' } } }))
    runtime.secrets.selfService = true
    metrics = await createMetrics({ runtime, sessions: () => ({ active: 0, inFlight: 0 }), processMetrics: false })
    // Alice and bob have names, one token has none; the tokens are refused in a face without selfServiceSecrets.
    const tokens = readTokens(
      [
        { env: 'A', role: 'dev', name: 'alice' },
        { env: 'B', role: 'dev', name: 'bob' },
        { env: 'U', role: 'dev' },
      ],
      ENV,
    )
    const on = new HttpFace(
      faceOptions(runtime, tokens, {
        selfServiceSecrets: true,
        metrics,
        metricsToken: readMetricsToken({ env: 'M' }, ENV, tokens),
      }),
    )
    const off = new HttpFace(faceOptions(runtime, tokens))
    for (const face of [on, off]) servers.push((await serveFace(face)).server)
    base = `http://127.0.0.1:${(servers[0]!.address() as { port: number }).port}`
    offBase = `http://127.0.0.1:${(servers[1]!.address() as { port: number }).port}`
  }, 30_000)
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => {})))
    for (const s of servers) s.close()
    metrics?.close()
    await runtime?.close()
  })

  it('refuses what is not one credentialed PUT of a good name and value, answering no value back', async () => {
    expect((await put('github', 'x')).status).toBe(401)
    const read = await fetch(`${base}/secrets/github`, { headers: { Authorization: `Bearer ${PEOPLE.alice}` } })
    expect(read.status).toBe(405)
    expect(read.headers.get('allow')).toBe('PUT')
    expect((await put('..%2Fetc', 'x', PEOPLE.alice)).status).toBe(400)
    expect((await put('github', '', PEOPLE.alice)).status).toBe(400)
    expect((await put('github', 'x'.repeat(MAX_SECRET_BYTES + 1), PEOPLE.alice)).status).toBe(413)
    const unnamed = await put('github', 'x', UNNAMED)
    expect(unnamed.status).toBe(403)
    expect(await unnamed.text()).toMatch(/give its http.tokens entry a "name"/)
    // Off (the default): the path does not exist.
    const off = await put('github', 'x', PEOPLE.alice, offBase)
    expect(off.status).toBe(404)
    expect(await off.text()).toBe(await (await fetch(`${offBase}/elsewhere`)).text())
  })

  it('tells a person with no secret the route that sets it, and keeps what they PUT for them alone', async () => {
    const { client } = await connectHttp(`${base}/mcp`, { token: PEOPLE.alice })
    open.push(client)
    const refused = await client.callTool({ name: 'gh__whoami', arguments: {} })
    expect(firstText(refused)).toMatch(/PUT \/secrets\/github on this myc with your myc credential/)
    const kept = await put('github', 'alice-own-token\n', PEOPLE.alice)
    expect(kept.status).toBe(200)
    const answer = await kept.text()
    expect(JSON.parse(answer)).toEqual({ kept: true, name: 'github', principal: 'alice' })
    expect(answer).not.toContain('alice-own-token')
    // The trailing newline is dropped; bob still has none.
    expect((await whoami(client)).secret).toBe('alice-own-token')
    const { client: bob } = await connectHttp(`${base}/mcp`, { token: PEOPLE.bob })
    open.push(bob)
    expect((await bob.callTool({ name: 'gh__whoami', arguments: {} })).isError).toBe(true)
  })

  it('replaces a person’s running instance when they set the secret again', async () => {
    const { client } = await connectHttp(`${base}/mcp`, { token: PEOPLE.alice })
    open.push(client)
    const before = await whoami(client)
    expect((await put('github', 'alice-second', PEOPLE.alice)).status).toBe(200)
    const after = await whoami(client)
    expect(after).toMatchObject({ secret: 'alice-second' })
    expect(after.pid).not.toBe(before.pid)
  })

  it(`sets at most ${SECRET_SETS_PER_MINUTE} a minute per credential`, async () => {
    const statuses: number[] = []
    for (let i = 0; i < SECRET_SETS_PER_MINUTE + 2; i++) statuses.push((await put(`n${i}`, 'v', PEOPLE.bob)).status)
    expect(statuses.slice(0, SECRET_SETS_PER_MINUTE).every((s) => s === 200)).toBe(true)
    expect(statuses.at(-1)).toBe(429)
  })

  it('lists the instances to the metrics credential only, and counts them on /metrics', async () => {
    expect((await fetch(`${base}/instances`)).status).toBe(401)
    expect((await fetch(`${base}/instances`, { headers: { Authorization: `Bearer ${PEOPLE.alice}` } })).status).toBe(
      401,
    )
    expect((await fetch(`${offBase}/instances`)).status).toBe(404)
    const listed = (await (
      await fetch(`${base}/instances`, { headers: { Authorization: `Bearer ${SCRAPER}` } })
    ).json()) as { instances: Array<Record<string, unknown>> }
    expect(listed.instances).toEqual([
      expect.objectContaining({
        server: 'gh',
        scope: 'principal',
        principal: 'alice',
        state: 'RUNNING',
        pid: expect.any(Number),
        startedAt: expect.any(String),
        lastUsed: expect.any(String),
      }),
    ])
    const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${SCRAPER}` } })).text()
    expect(text).toMatch(/^myc_child_instances\{server="gh",scope="principal"\} 1$/m)
  })
})
