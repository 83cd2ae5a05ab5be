import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { connectHttp, modernRequest, startHttpMyc, type HttpMyc } from '../helpers/http.js'
import { callbackCode, startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'
import { quietWindow, waitFor } from '../helpers/wait-for.js'

/**
 * `myc serve --http` in front of an OAuth-protected HTTP server with an
 * `oauth` key: each person logs in as themselves (GET /oauth/login/<server>
 * with their own myc token, the authorization server's redirect to
 * /oauth/callback, then POST /oauth/login/<server> with the code it shows and
 * the same token) and calls it with their own tokens; neither reaches the
 * other's. The tool list comes from the login of whoever runs myc.
 */
const TOKENS = {
  MYC_E2E_PP_ALICE: 'alice-pp-0123456789abcdef0123456789abcdef',
  MYC_E2E_PP_BOB: 'bob-pp-0123456789abcdef0123456789abcdef01',
  MYC_E2E_PP_NONAME: 'noname-pp-0123456789abcdef0123456789abcd',
  MYC_E2E_PP_GUEST: 'guest-pp-0123456789abcdef0123456789abcde',
}
const alice = TOKENS.MYC_E2E_PP_ALICE
const bob = TOKENS.MYC_E2E_PP_BOB

function whoami(result: { content?: unknown }): string {
  return (result.content as Array<{ text: string }>)[0]!.text
}

describe('OAuth per person behind myc serve --http (build/myc.cjs)', () => {
  let server: OAuthTestServer
  let myc: HttpMyc
  let env: Record<string, string>
  let config: string
  const open: Client[] = []
  const client = async (token: string) => {
    const { client: c } = await connectHttp(myc.url, { token })
    open.push(c)
    return c
  }
  /**
   * The person: asks myc for the authorization URL with their own credential,
   * opens it, lands on myc's callback, and finishes with the one-time code
   * it shows and the same credential.
   */
  const logIn = async (token: string, serverKey = 'gh') => {
    const started = await fetch(`${myc.base}/oauth/login/${serverKey}`, {
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' },
    })
    if (started.status !== 200) return { status: started.status, text: await started.text() }
    const { authorizationUrl } = (await started.json()) as { authorizationUrl: string }
    const landed = await (await fetch(authorizationUrl, { redirect: 'follow' })).text()
    const code = callbackCode(landed)
    const finished = await fetch(`${myc.base}/oauth/login/${serverKey}?code=${code}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}` },
    })
    return { status: finished.status, text: await finished.text(), authorizationUrl }
  }

  beforeAll(async () => {
    requireBundle()
    server = await startOAuthServer()
    const home = mkdtempSync(path.join(tmpdir(), 'myc-pp-home-'))
    env = { XDG_CONFIG_HOME: path.join(home, 'config'), HOME: home, MYC_TOKEN_KEY: '', ...TOKENS }
    config = writeConfig({
      mcpServers: {
        gh: { type: 'http', url: server.mcpUrl, oauth: {} },
        hidden: { type: 'http', url: server.mcpUrl, oauth: {} },
      },
      roles: { default: 'person' },
      session: { defaultSkills: ['remote'] },
      http: {
        tokens: [
          { env: 'MYC_E2E_PP_ALICE', role: 'person', name: 'alice' },
          { env: 'MYC_E2E_PP_BOB', role: 'person', name: 'bob' },
          { env: 'MYC_E2E_PP_NONAME', role: 'person' },
          { env: 'MYC_E2E_PP_GUEST', role: 'guest', name: 'guest' },
        ],
      },
    })
    const skills = path.join(path.dirname(config), 'skills')
    mkdirSync(path.join(skills, 'remote'), { recursive: true })
    writeFileSync(
      path.join(skills, 'remote', 'SKILL.md'),
      '---\nname: remote\ndescription: The remote server\nallowedRoles: [person]\nallowedTools: ["gh:*"]\n---\nUse it.\n',
    )
    mkdirSync(path.join(skills, 'nothing'), { recursive: true })
    writeFileSync(
      path.join(skills, 'nothing', 'SKILL.md'),
      '---\nname: nothing\ndescription: Nothing\nallowedRoles: [guest]\nallowedTools: []\n---\nNothing.\n',
    )
    // Whoever runs myc logs in once (the tool list comes from their login).
    const operator = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [bundle, 'auth', 'login', 'gh', '--no-browser', '--config', config], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      child.stdout.once(
        'data',
        (chunk: Buffer) => void fetch(chunk.toString().trim(), { redirect: 'follow' }).catch(() => {}),
      )
      child.once('close', resolve)
    })
    expect(operator).toBe(0)
    myc = await startHttpMyc(config, { env })
  }, 60_000)
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => {})))
    await myc?.stop()
    await server?.close()
  })

  it('a person without their own login is told how to log in, naming the route; the tool is listed from the operator’s login', async () => {
    const a = await client(alice)
    expect((await a.listTools()).tools.map((t) => t.name).filter((n) => !n.startsWith('mycelium__'))).toEqual([
      'gh__whoami',
    ])
    const refused = await a.callTool({ name: 'gh__whoami', arguments: {} })
    expect(refused.isError).toBe(true)
    expect(whoami(refused)).toMatch(
      /needs your own OAuth login: open \/oauth\/login\/gh .*myc auth login gh --principal alice/,
    )
    // A prompt of the server, too: its error says the way in.
    await expect(a.getPrompt({ name: 'gh__whose' })).rejects.toThrow(
      /needs your own OAuth login: open \/oauth\/login\/gh /,
    )
  }, 30_000)

  it('two people log in through myc, each call carries the caller’s own login, and neither reaches the other’s', async () => {
    const before = server.tokenRequests.length
    const aliceLogin = await logIn(alice)
    expect(aliceLogin.status, aliceLogin.text).toBe(200)
    expect(JSON.parse(aliceLogin.text)).toEqual({ loggedIn: true, server: 'gh', principal: 'alice' })
    // The redirect is myc's own callback; PKCE and the resource as for any login.
    const q = new URL(aliceLogin.authorizationUrl!).searchParams
    expect(q.get('redirect_uri')).toBe(`${myc.base}/oauth/callback`)
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('resource')).toBe(server.mcpUrl)
    const bobLogin = await logIn(bob)
    expect(bobLogin.status, bobLogin.text).toBe(200)
    expect(server.tokenRequests.length).toBe(before + 2)

    const a = await client(alice)
    const b = await client(bob)
    const heard = { alice: [] as string[], bob: [] as string[] }
    a.setNotificationHandler('notifications/message', (n) => void heard.alice.push(String(n.params.data)))
    b.setNotificationHandler('notifications/message', (n) => void heard.bob.push(String(n.params.data)))
    const aliceSays = whoami(await a.callTool({ name: 'gh__whoami', arguments: {} }))
    // What the server logs during alice's call (on her own login's connection) reaches her, and no one else.
    const login = (says: string, as: string) => says.replace(/^you are logged in \((.*)\)$/, as)
    expect(heard.alice).toEqual([login(aliceSays, 'call of $1')])
    expect(heard.bob).toEqual([])
    // And what it says outside any call, after it: to alice's sessions only.
    await waitFor(() => heard.alice.length === 2, 10_000, 'the message after alice’s call')
    expect(heard.alice[1]).toBe(login(aliceSays, 'after a call of $1'))
    const bobSays = whoami(await b.callTool({ name: 'gh__whoami', arguments: {} }))
    await waitFor(() => heard.bob.length === 2, 10_000, 'the message after bob’s call')
    expect(heard.bob).toEqual([login(bobSays, 'call of $1'), login(bobSays, 'after a call of $1')])
    // Bob's connection outside his call must not reach alice, whose session hears such messages (above).
    await quietWindow(300)
    expect(heard.alice).toHaveLength(2)
    // The operator's login was the first; alice's and bob's are their own.
    expect(aliceSays).toMatch(/^you are logged in \(login \d+\)$/)
    expect(bobSays).toMatch(/^you are logged in \(login \d+\)$/)
    expect(new Set([aliceSays, bobSays, 'you are logged in (login 1)']).size).toBe(3)
    // A log level and a subscription a person's client sets are asked of their own login's connection only.
    const loginOf = (says: string) => Number(/\(login (\d+)\)/.exec(says)![1])
    await a.setLoggingLevel('warning')
    const resource = (await a.listResources()).resources.find((r) => r.name.endsWith('session'))!
    await a.subscribeResource({ uri: resource.uri })
    expect(server.asked.map(({ login, method }) => `${login} ${method}`)).toEqual([
      `${loginOf(aliceSays)} logging/setLevel`,
      `${loginOf(aliceSays)} resources/subscribe`,
    ])
    expect(server.asked[0]!.params.level).toBe('warning')
    // Again, and over the 2026-07-28 route: the same person, the same login; prompts go out as their caller too.
    expect(whoami(await a.callTool({ name: 'gh__whoami', arguments: {} }))).toBe(aliceSays)
    const prompt = (await a.getPrompt({ name: 'gh__whose' })).messages[0]!.content as { text: string }
    expect(prompt.text).toBe(aliceSays.replace(/^you are logged in \((.*)\)$/, '$1'))
    const modern = await modernRequest(myc.url, 'tools/call', { name: 'gh__whoami', arguments: {} }, { token: bob })
    expect(whoami(modern.answer.result as { content?: unknown })).toBe(bobSays)

    // One logs out (the CLI, for that principal): only that person is asked to log in again.
    const out = await new Promise<number | null>((resolve) =>
      spawn(process.execPath, [bundle, 'auth', 'logout', 'gh', '--principal', 'alice', '--config', config], {
        env: { ...process.env, ...env },
        stdio: 'ignore',
      }).once('close', resolve),
    )
    expect(out).toBe(0)
    expect(whoami(await b.callTool({ name: 'gh__whoami', arguments: {} }))).toBe(bobSays)
    const afterLogout = await a.callTool({ name: 'gh__whoami', arguments: {} })
    expect(afterLogout.isError).toBe(true)
    expect(whoami(afterLogout)).toMatch(/needs your own OAuth login: open \/oauth\/login\/gh /)
  }, 60_000)

  it('the store keeps each person’s tokens sealed apart, and no token text is in it or in myc’s log', () => {
    const store = readFileSync(path.join(env.XDG_CONFIG_HOME!, 'mycelium', 'oauth-tokens.json'), 'utf8')
    // The operator's, alice's (logged out since) and bob's: separate entries, no token text.
    expect(Object.keys((JSON.parse(store) as { entries: object }).entries).length).toBeGreaterThanOrEqual(2)
    for (const token of server.issued) {
      expect(store).not.toContain(token)
      expect(myc.stderr()).not.toContain(token)
    }
  })

  it('refuses a login without a credential, to an unnamed token, and for a server the credential does not see (as for none)', async () => {
    expect((await fetch(`${myc.base}/oauth/login/gh`)).status).toBe(401)
    const unnamed = await logIn(TOKENS.MYC_E2E_PP_NONAME)
    expect(unnamed.status).toBe(403)
    expect(unnamed.text).toMatch(/give its http.tokens entry a "name"/)
    const hidden = await logIn(alice, 'hidden')
    const missing = await logIn(alice, 'missing')
    expect(hidden.status).toBe(404)
    expect(hidden.text.replace('hidden', 'X')).toBe(missing.text.replace('missing', 'X'))
    // A role that does not see gh: as if there were none.
    expect((await logIn(TOKENS.MYC_E2E_PP_GUEST)).status).toBe(404)
    // A callback with a state myc never gave is no login.
    const forged = await fetch(`${myc.base}/oauth/callback?code=x&state=forged`)
    expect(forged.status).toBe(400)
  }, 30_000)
})
