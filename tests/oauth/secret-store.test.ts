import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { TokenStore } from '../../src/oauth/token-store.js'

const KEY = Buffer.alloc(32, 3).toString('base64')
const storeIn = (dir: string) => SecretStore.forUser({ XDG_CONFIG_HOME: dir, MYC_TOKEN_KEY: KEY })
const fresh = () => mkdtempSync(path.join(tmpdir(), 'myc-secrets-'))

describe('the secret store', () => {
  it('refuses a file that is not a secret store, naming it', async () => {
    const other = storeIn(fresh())
    await other.keep('a', 'v')
    writeFileSync(other.file, JSON.stringify({ version: 2, entries: {} }))
    await expect(storeIn(path.dirname(path.dirname(other.file))).keep('b', 'v')).rejects.toThrow(
      /secrets\.json is not a myc secret store/,
    )
  })

  it('seals: the file holds neither the value nor the name, and reads back what was kept', async () => {
    const dir = fresh()
    const store = storeIn(dir)
    expect(await store.keep('brave.BRAVE_API_KEY', 'sk-SECRET-VALUE-1234')).toBe('brave.BRAVE_API_KEY')
    const text = readFileSync(store.file, 'utf8')
    expect(text).not.toContain('sk-SECRET-VALUE-1234')
    expect(text).not.toContain('BRAVE')
    expect(store.file).toBe(path.join(dir, 'mycelium', 'secrets.json'))
    if (process.platform !== 'win32') expect(statSync(store.file).mode & 0o777).toBe(0o600)
    expect(await storeIn(dir).value('brave.BRAVE_API_KEY')).toBe('sk-SECRET-VALUE-1234')
    expect(await storeIn(dir).value('brave.OTHER')).toBeUndefined()
  })

  it('keeps a second value of the same name under a name of its own, and the same value under the same name', async () => {
    const store = storeIn(fresh())
    expect(await store.keep('gh.TOKEN', 'one')).toBe('gh.TOKEN')
    expect(await store.keep('gh.TOKEN', 'one')).toBe('gh.TOKEN')
    expect(await store.keep('gh.TOKEN', 'two')).toBe('gh.TOKEN-2')
    expect(await store.keep('gh.TOKEN', 'three')).toBe('gh.TOKEN-3')
    expect(await store.value('gh.TOKEN')).toBe('one')
    expect(await store.value('gh.TOKEN-2')).toBe('two')
  })

  it('shares the OAuth store’s key but not its entries: one moved into the other file does not open', async () => {
    const dir = fresh()
    const env = { XDG_CONFIG_HOME: dir, MYC_TOKEN_KEY: KEY }
    const secrets = SecretStore.forUser(env)
    const tokens = TokenStore.forUser('local', env)
    const url = 'https://mcp.example.com/mcp'
    await secrets.keep(new URL(url).href, 'secret-value')
    // The same name in the token file: the secret's sealed entry, copied over, opens as nothing.
    writeFileSync(tokens.file, readFileSync(secrets.file))
    expect(await tokens.get(url)).toBeUndefined()
    expect(await secrets.value(new URL(url).href)).toBe('secret-value')
  })

  it('keeps each principal’s secrets apart: one’s entry never opens as another’s, and names list per principal', async () => {
    const dir = fresh()
    const env = { XDG_CONFIG_HOME: dir, MYC_TOKEN_KEY: KEY }
    const alice = SecretStore.forUser(env, { principal: 'alice' })
    const bob = SecretStore.forUser(env, { principal: 'bob' })
    await alice.set('github', 'alice-value')
    await alice.set('api', 'alice-api')
    expect(await bob.value('github')).toBeUndefined()
    expect(await SecretStore.forUser(env).value('github')).toBeUndefined()
    expect(await alice.names()).toEqual(['api', 'github'])
    expect(await bob.names()).toEqual([])
    // Bob's entry sealed over alice's place in the file still opens as nothing for alice.
    await bob.set('github', 'bob-value')
    expect(await alice.value('github')).toBe('alice-value')
    expect(await alice.remove('github')).toBe(true)
    expect(await alice.remove('github')).toBe(false)
    expect(await alice.names()).toEqual(['api'])
    expect(await bob.value('github')).toBe('bob-value')
    // The file names no principal and no secret.
    expect(readFileSync(alice.file, 'utf8')).not.toMatch(/alice|bob|github|api/)
  })

  it('lists what myc add keeps too', async () => {
    const store = storeIn(fresh())
    await store.keep('gh.TOKEN', 'one')
    await store.keep('gh.TOKEN', 'two')
    expect(await store.names()).toEqual(['gh.TOKEN', 'gh.TOKEN-2'])
  })
})
