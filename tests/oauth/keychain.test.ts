import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { osKeyVault } from '../../src/oauth/keychain.js'
import { TokenStore, type StoredLogin } from '../../src/oauth/token-store.js'
import { repoRoot } from '../helpers/fixtures.js'
import { requireTool } from '../helpers/tools.js'

const has = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
const ready = requireTool(
  'secret-tool, gnome-keyring-daemon and dbus-daemon',
  process.platform === 'linux' && ['secret-tool', 'gnome-keyring-daemon', 'dbus-daemon'].every(has),
)

const login = (token: string): StoredLogin => ({
  serverUrl: 'https://mcp.example.com/mcp',
  tokens: { access_token: token, token_type: 'Bearer' },
  client: { client_id: 'c' },
  authorizationServerUrl: 'https://auth.example.com',
  savedAt: 0,
})

/**
 * Another process (a fresh module cache) opening the login kept in `dir`, with the key vault of `platform`
 * (this machine's by default): the token store and keychain modules bundled once into a script plain node runs,
 * where node with tsx compiled src/ afresh at each start. What it prints: the access token, or null.
 */
const OPENER = `import { TokenStore } from './src/oauth/token-store.ts'
import { osKeyVault } from './src/oauth/keychain.ts'
const [dir, platform] = process.argv.slice(2)
const store = new TokenStore(dir, 'local', undefined, osKeyVault(process.env, platform))
process.stdout.write(JSON.stringify((await store.get('https://mcp.example.com/mcp'))?.tokens.access_token ?? null))`
let opener = ''
beforeAll(async () => {
  opener = path.join(mkdtempSync(path.join(tmpdir(), 'myc-keychain-opener-')), 'open-login.mjs')
  await build({
    stdin: { contents: OPENER, resolveDir: repoRoot, loader: 'ts', sourcefile: 'open-login.ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: opener,
    logLevel: 'warning',
  })
})
const openInAnotherProcess = (dir: string, env: Record<string, string>, platform?: NodeJS.Platform) =>
  spawnSync(process.execPath, [opener, dir, ...(platform ? [platform] : [])], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  })

/**
 * The token store's key in a real OS keychain: GNOME Keyring on a D-Bus
 * session bus of the test's own (dbus-daemon --session), unlocked with a
 * throwaway password, spoken to through libsecret's secret-tool.
 */
describe.skipIf(!ready)(
  'the token store keeps its key in the OS keychain when one answers (GNOME Keyring, Secret Service)',
  () => {
    let env: Record<string, string>
    let bus: ReturnType<typeof spawn> | undefined
    beforeAll(async () => {
      const home = mkdtempSync(path.join(tmpdir(), 'myc-keychain-'))
      env = {
        PATH: process.env.PATH ?? '',
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, 'config'),
        XDG_DATA_HOME: path.join(home, 'data'),
        XDG_RUNTIME_DIR: home,
      }
      bus = spawn('dbus-daemon', ['--session', '--nofork', '--print-address=1', '--nopidfile'], {
        env,
        stdio: ['ignore', 'pipe', 'ignore'],
      })
      const address = await new Promise<string>((resolve) =>
        bus!.stdout!.once('data', (c: Buffer) => resolve(c.toString().trim())),
      )
      env.DBUS_SESSION_BUS_ADDRESS = address
      const unlock = spawnSync('gnome-keyring-daemon', ['--unlock', '--components=secrets', '--daemonize'], {
        env,
        input: 'test-password',
        encoding: 'utf8',
      })
      expect(unlock.status).toBe(0)
    })
    afterAll(() => {
      bus?.kill()
    })

    it('makes the key in the keychain (no key file), and another process opens the logins with it', async () => {
      const store = new TokenStore(path.join(env.XDG_CONFIG_HOME!, 'mycelium'), 'local', undefined, osKeyVault(env))
      await store.put('https://mcp.example.com/mcp', login('at-keychain-1'))
      expect(store.keySource).toMatch(/OS keychain/)
      expect(existsSync(store.keyFile)).toBe(false)
      // The key is in the keychain: 32 bytes, and no token text in the store's file.
      const kept = spawnSync('secret-tool', ['lookup', 'service', 'mycelium', 'account', 'oauth-token-key'], {
        env,
        encoding: 'utf8',
      })
      expect(Buffer.from(kept.stdout.trim(), 'base64')).toHaveLength(32)
      expect(readFileSync(store.file, 'utf8')).not.toContain('at-keychain-1')
      // Another process (a fresh module cache) opens the login with the keychain's key.
      const dir = path.join(env.XDG_CONFIG_HOME!, 'mycelium')
      const other = openInAnotherProcess(dir, env)
      expect(other.stdout, other.stderr).toBe('"at-keychain-1"')
      // Without the keychain's key the entry does not open: it is sealed with that key, not a file's.
      const elsewhere = openInAnotherProcess(dir, { ...env, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' })
      expect(elsewhere.stdout, elsewhere.stderr).toBe('null')
    }, 30_000)

    it('keeps using a key file that is already there (its logins stay readable), and MYC_TOKEN_KEYCHAIN=off keeps the file', async () => {
      const dir = path.join(env.HOME!, 'other', 'mycelium')
      const file = new TokenStore(dir, 'local', undefined, undefined)
      await file.put('https://mcp.example.com/mcp', login('at-file-1'))
      expect(existsSync(file.keyFile)).toBe(true)
      const withKeychain = new TokenStore(dir, 'local', undefined, osKeyVault(env))
      expect((await withKeychain.get('https://mcp.example.com/mcp'))?.tokens.access_token).toBe('at-file-1')
      expect(withKeychain.keySource).toBe(file.keyFile)
      expect(osKeyVault({ ...env, MYC_TOKEN_KEYCHAIN: 'off' })).toBeUndefined()
      expect(osKeyVault({ ...env, DBUS_SESSION_BUS_ADDRESS: '' })).toBeUndefined()
      expect(osKeyVault(env, 'aix')).toBeUndefined()
    })
  },
)

/**
 * The macOS Keychain, through `security`: macOS cannot run here, so a
 * stand-in `security` (tests/fixtures/fake-macos/security) keeps the items
 * and records every invocation's arguments. It checks how myc speaks to the
 * tool: the key is written through `security -i` on stdin, never in a
 * process's arguments, and read back with `find-generic-password -w`.
 */
// The stand-ins are scripts with a #! line: they run on Linux and macOS (what is checked, how myc speaks to the tool, is the same everywhere), not on Windows.
describe.skipIf(process.platform === 'win32')(
  'the token store keeps its key in the macOS Keychain (a stand-in security tool)',
  () => {
    it('makes the key there, never passing it as an argument, and opens the logins with it again', async () => {
      const home = mkdtempSync(path.join(tmpdir(), 'myc-mac-keychain-'))
      const env = {
        PATH: `${path.join(repoRoot, 'tests', 'fixtures', 'fake-macos')}${path.delimiter}${process.env.PATH ?? ''}`,
        FAKE_SECURITY_STORE: path.join(home, 'items.json'),
        FAKE_SECURITY_LOG: path.join(home, 'calls.log'),
      }
      const dir = path.join(home, 'config', 'mycelium')
      const store = new TokenStore(dir, 'local', undefined, osKeyVault(env, 'darwin'))
      await store.put('https://mcp.example.com/mcp', login('at-mac-1'))
      expect(store.keySource).toMatch(/macOS Keychain/)
      expect(existsSync(store.keyFile)).toBe(false)
      const key = (JSON.parse(readFileSync(env.FAKE_SECURITY_STORE, 'utf8')) as Record<string, string>)[
        'mycelium/oauth-token-key'
      ]!
      expect(Buffer.from(key, 'base64')).toHaveLength(32)
      // Asked for it, then wrote it through stdin, then read it back: the key in no argument list.
      const calls = readFileSync(env.FAKE_SECURITY_LOG, 'utf8').trim().split('\n')
      expect(calls.map((c) => (JSON.parse(c) as string[])[0])).toEqual([
        'find-generic-password',
        '-i',
        'find-generic-password',
      ])
      expect(readFileSync(env.FAKE_SECURITY_LOG, 'utf8')).not.toContain(key)
      // Another process opens the login with the keychain's key (and makes no key file).
      const other = openInAnotherProcess(dir, env, 'darwin')
      expect(other.stdout, other.stderr).toBe('"at-mac-1"')
      expect(existsSync(store.keyFile)).toBe(false)
    })
  },
)

/**
 * The Windows Credential Manager, through Windows PowerShell's password
 * vault: no Windows with one runs here (Wine has none), so a stand-in
 * `powershell.exe` (tests/fixtures/fake-windows) keeps the passwords and
 * records every invocation. It checks how myc speaks to it: the script as
 * -EncodedCommand, the key on stdin only.
 */
describe.skipIf(process.platform === 'win32')(
  'the token store keeps its key in the Windows Credential Manager (a stand-in powershell.exe)',
  () => {
    it('makes the key there, never passing it as an argument or in the script, and opens the logins with it again', async () => {
      const home = mkdtempSync(path.join(tmpdir(), 'myc-win-vault-'))
      const env = {
        PATH: `${path.join(repoRoot, 'tests', 'fixtures', 'fake-windows')}${path.delimiter}${process.env.PATH ?? ''}`,
        FAKE_VAULT_STORE: path.join(home, 'vault.json'),
        FAKE_VAULT_LOG: path.join(home, 'calls.log'),
      }
      const dir = path.join(home, 'config', 'mycelium')
      const store = new TokenStore(dir, 'local', undefined, osKeyVault(env, 'win32'))
      await store.put('https://mcp.example.com/mcp', login('at-win-1'))
      expect(store.keySource).toMatch(/Windows Credential Manager/)
      expect(existsSync(store.keyFile)).toBe(false)
      const key = (JSON.parse(readFileSync(env.FAKE_VAULT_STORE, 'utf8')) as Record<string, string>)[
        'mycelium/oauth-token-key'
      ]!
      expect(Buffer.from(key, 'base64')).toHaveLength(32)
      const calls = readFileSync(env.FAKE_VAULT_LOG, 'utf8')
        .trim()
        .split('\n')
        .map((c) => JSON.parse(c) as { args: string[]; script: string })
      expect(calls.map((c) => (c.script.includes('.Retrieve(') ? 'retrieve' : 'add'))).toEqual([
        'retrieve',
        'add',
        'retrieve',
      ])
      expect(calls.every((c) => c.args.slice(0, 3).join(' ') === '-NoProfile -NonInteractive -EncodedCommand')).toBe(
        true,
      )
      expect(readFileSync(env.FAKE_VAULT_LOG, 'utf8')).not.toContain(key)
      const other = openInAnotherProcess(dir, env, 'win32')
      expect(other.stdout, other.stderr).toBe('"at-win-1"')
    })
  },
)
