import { mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { childAuthProvider, NeedsLoginError, refreshLogin } from '../../src/oauth/child-auth.js'
import { parseTokenKey, TokenStore, type StoredLogin } from '../../src/oauth/token-store.js'
import { userState } from '../../src/config/state-roots.js'
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'

const URL_A = 'https://mcp.example.com/mcp'
const fresh = () => mkdtempSync(path.join(tmpdir(), 'myc-tokens-'))

function login(accessToken: string, extra: Partial<StoredLogin> = {}): StoredLogin {
  return {
    serverUrl: URL_A,
    tokens: {
      access_token: accessToken,
      token_type: 'Bearer',
      refresh_token: `refresh-${accessToken}`,
      scope: 'mcp:tools',
    },
    expiresAt: Date.now() + 3_600_000,
    client: { client_id: 'client-1' },
    authorizationServerUrl: 'https://auth.example.com',
    savedAt: Date.now(),
    ...extra,
  }
}

describe('the token store', () => {
  it('lives in the user config folder: XDG_CONFIG_HOME, ~/.config, %APPDATA%', () => {
    const userConfigDir = (env: Record<string, string>, platform: NodeJS.Platform, home: string) =>
      userState(env, platform, home).configDir.path
    expect(userConfigDir({ XDG_CONFIG_HOME: '/x/cfg' }, 'linux', '/home/a')).toBe(path.join('/x/cfg', 'mycelium'))
    expect(userConfigDir({}, 'linux', '/home/a')).toBe(path.join('/home/a', '.config', 'mycelium'))
    expect(userConfigDir({ XDG_CONFIG_HOME: 'relative' }, 'darwin', '/Users/a')).toBe(
      path.join('/Users/a', '.config', 'mycelium'),
    )
    expect(userConfigDir({ APPDATA: 'C:\\Users\\a\\AppData\\Roaming' }, 'win32', 'C:\\Users\\a')).toBe(
      path.join('C:\\Users\\a\\AppData\\Roaming', 'mycelium'),
    )
  })

  it.skipIf(process.platform === 'win32')('writes the tokens file and the key file 0600, the folder 0700', async () => {
    const dir = path.join(fresh(), 'mycelium')
    const store = new TokenStore(dir, 'local')
    await store.put(URL_A, login('access-perm'))
    expect(statSync(store.file).mode & 0o777).toBe(0o600)
    expect(statSync(store.keyFile).mode & 0o777).toBe(0o600)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    // A rewrite keeps the mode.
    await store.put(URL_A, login('access-perm-2'))
    expect(statSync(store.file).mode & 0o777).toBe(0o600)
  })

  it('encrypts: the file holds no token, secret or server URL, and reads back what was put', async () => {
    const store = new TokenStore(fresh(), 'local')
    const saved = login('access-SECRET-TEXT-1234', {
      client: { client_id: 'client-1', client_secret: 'client-SECRET-5678' },
    })
    await store.put(URL_A, saved)
    const text = readFileSync(store.file, 'utf8')
    for (const needle of [
      'access-SECRET-TEXT-1234',
      'refresh-access-SECRET',
      'client-SECRET-5678',
      'mcp.example.com',
      'auth.example.com',
      'local',
    ])
      expect(text).not.toContain(needle)
    expect(await store.get(URL_A)).toEqual(saved)
    expect(await store.get('https://other.example.com/mcp')).toBeUndefined()
  })

  it('keys an entry by server URL and principal: one principal never reads (or is handed) another’s tokens', async () => {
    const dir = fresh()
    const alice = new TokenStore(dir, 'alice')
    const bob = new TokenStore(dir, 'bob')
    await alice.put(URL_A, login('alice-token'))
    expect(await bob.get(URL_A)).toBeUndefined()
    // Alice's sealed entry moved under Bob's id does not open for Bob either.
    await bob.put(URL_A, login('bob-token'))
    const file = JSON.parse(readFileSync(alice.file, 'utf8')) as { entries: Record<string, unknown> }
    const ids = Object.keys(file.entries)
    expect(ids).toHaveLength(2)
    const aliceEntry = file.entries[ids[0]!]
    const swapped = { ...file, entries: { [ids[0]!]: file.entries[ids[1]!], [ids[1]!]: aliceEntry } }
    writeFileSync(alice.file, JSON.stringify(swapped))
    expect(await alice.get(URL_A)).toBeUndefined()
    expect(await bob.get(URL_A)).toBeUndefined()
  })

  it('deletes one login and leaves the others', async () => {
    const store = new TokenStore(fresh(), 'local')
    await store.put(URL_A, login('a'))
    await store.put('https://b.example.com/mcp', login('b'))
    expect(await store.delete(URL_A)).toBe(true)
    expect(await store.delete(URL_A)).toBe(false)
    expect(await store.get(URL_A)).toBeUndefined()
    expect((await store.get('https://b.example.com/mcp'))?.tokens.access_token).toBe('b')
  })

  it('takes its key from MYC_TOKEN_KEY when set (no key file), and a wrong key opens nothing', async () => {
    const dir = fresh()
    const key = Buffer.alloc(32, 7).toString('base64')
    const store = TokenStore.forUser('local', { XDG_CONFIG_HOME: dir, MYC_TOKEN_KEY: key })
    await store.put(URL_A, login('env-key-token'))
    expect(existsSync(store.keyFile)).toBe(false)
    expect(
      (
        await TokenStore.forUser('local', {
          XDG_CONFIG_HOME: dir,
          MYC_TOKEN_KEY: Buffer.alloc(32, 7).toString('hex'),
        }).get(URL_A)
      )?.tokens.access_token,
    ).toBe('env-key-token')
    expect(
      await TokenStore.forUser('local', {
        XDG_CONFIG_HOME: dir,
        MYC_TOKEN_KEY: Buffer.alloc(32, 8).toString('base64'),
      }).get(URL_A),
    ).toBeUndefined()
    expect(() => parseTokenKey('too-short')).toThrow(/MYC_TOKEN_KEY must be 32 bytes/)
  })

  it('reading with no login stored makes no key file', async () => {
    const store = new TokenStore(fresh(), 'local')
    expect(await store.get(URL_A)).toBeUndefined()
    expect(existsSync(store.keyFile)).toBe(false)
  })
})

describe('refreshing a stored login', () => {
  let server: OAuthTestServer
  const client = { id: 'pre-registered', secret: 'pre-secret' }
  beforeAll(async () => {
    server = await startOAuthServer({ client })
  })
  afterAll(async () => {
    await server.close()
  })

  function expired(): StoredLogin {
    const tokens = server.issueTokens(client.id)
    return {
      serverUrl: server.mcpUrl,
      tokens,
      expiresAt: Date.now() - 1_000,
      client: { client_id: client.id, client_secret: client.secret },
      authorizationServerUrl: server.base,
      resource: server.mcpUrl,
      savedAt: Date.now() - 3_600_000,
    }
  }

  it('two concurrent refreshes of an expired token (two stores, as two processes would have) refresh once', async () => {
    const dir = fresh()
    const seed = expired()
    await new TokenStore(dir, 'local').put(server.mcpUrl, seed)
    const before = server.refreshes
    const a = childAuthProvider({ key: 'srv', url: server.mcpUrl, store: new TokenStore(dir, 'local') })
    const b = childAuthProvider({ key: 'srv', url: server.mcpUrl, store: new TokenStore(dir, 'local') })
    const [ta, tb] = await Promise.all([a.token(), b.token()])
    expect(server.refreshes - before).toBe(1)
    expect(ta).toBe(tb)
    expect(ta).not.toBe(seed.tokens.access_token)
    const stored = await new TokenStore(dir, 'local').get(server.mcpUrl)
    expect(stored?.tokens.access_token).toBe(ta)
    expect(stored?.expiresAt).toBeGreaterThan(Date.now())
    // The refresh sent the resource indicator and authenticated the client.
    const form = server.tokenRequests.at(-1)!
    expect(form.get('grant_type')).toBe('refresh_token')
    expect(form.get('resource')).toBe(server.mcpUrl)
  })

  it('a caller that saw an old token gets the one another already stored, without a second refresh', async () => {
    const dir = fresh()
    const seed = expired()
    const store = new TokenStore(dir, 'local')
    await store.put(server.mcpUrl, seed)
    const first = await refreshLogin({ key: 'srv', url: server.mcpUrl, store }, seed.tokens.access_token)
    const count = server.refreshes
    const second = await refreshLogin(
      { key: 'srv', url: server.mcpUrl, store: new TokenStore(dir, 'local') },
      seed.tokens.access_token,
    )
    expect(second).toBe(first)
    expect(server.refreshes).toBe(count)
  })

  it('refreshes on a 401, and asks for a login when there is none or the refresh is refused', async () => {
    const dir = fresh()
    const store = new TokenStore(dir, 'local')
    const tokens = server.issueTokens(client.id)
    await store.put(server.mcpUrl, { ...expired(), tokens, expiresAt: Date.now() + 3_600_000, savedAt: Date.now() })
    const provider = childAuthProvider({ key: 'srv', url: server.mcpUrl, store })
    expect(await provider.token()).toBe(tokens.access_token)
    const count = server.refreshes
    await provider.onUnauthorized!({
      response: new Response(null, { status: 401 }),
      serverUrl: new URL(server.mcpUrl),
      fetchFn: fetch,
    })
    expect(server.refreshes).toBe(count + 1)
    const renewed = await provider.token()
    expect(renewed).not.toBe(tokens.access_token)

    // A refresh token the server no longer knows: the fix is a login.
    await store.update(server.mcpUrl, (current) => ({
      ...current!,
      tokens: { ...current!.tokens, refresh_token: 'rt-unknown' },
    }))
    const refused = provider.onUnauthorized!({
      response: new Response(null, { status: 401 }),
      serverUrl: new URL(server.mcpUrl),
      fetchFn: fetch,
    })
    await expect(refused).rejects.toBeInstanceOf(NeedsLoginError)
    await expect(refused).rejects.toThrow(/run: myc auth login srv/)

    const none = childAuthProvider({ key: 'other', url: server.mcpUrl, store: new TokenStore(fresh(), 'local') })
    expect(await none.token()).toBeUndefined()
    await expect(
      none.onUnauthorized!({
        response: new Response(null, { status: 401 }),
        serverUrl: new URL(server.mcpUrl),
        fetchFn: fetch,
      }),
    ).rejects.toThrow(/needs an OAuth login .*run: myc auth login other/)
  })
})
