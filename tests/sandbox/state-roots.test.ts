import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { createSandboxRunner } from '../../src/principal/builtin-exec.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import { hasBwrap } from '../helpers/sandbox.js'

/**
 * Probes of SECURITY.md's promise that every state root is hidden wherever
 * it lies relative to the workspace, tried through `mycelium:exec`'s own
 * runner (createSandboxRunner, as `myc serve` and the agent make it) with a
 * person's environment of the test's choosing.
 */
const SERVER = 'https://mcp.example.com/mcp'
const made: string[] = []
const folder = (prefix: string, base = tmpdir()) => {
  const dir = realpathSync(mkdtempSync(path.join(base, prefix)))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A real OAuth login in the token store of the person whose environment `env` is. */
async function logIn(env: Record<string, string>): Promise<TokenStore> {
  const store = TokenStore.forUser('local', { ...env, MYC_TOKEN_KEYCHAIN: 'off' })
  await store.put(SERVER, {
    serverUrl: SERVER,
    tokens: { access_token: 'at-secret', token_type: 'Bearer', refresh_token: 'rt-secret' },
    client: { client_id: 'client-1' },
    authorizationServerUrl: 'https://auth.example.com',
    savedAt: Date.now(),
  })
  return store
}

/** A project whose config puts the workspace where the test says; the runner `mycelium:exec` would use. */
async function runnerFor(workspace: string, env: Record<string, string>) {
  const project = folder('myc-roots-proj-')
  writeFileSync(path.join(project, 'mycelium.config.json'), JSON.stringify({ sandbox: { workspace } }))
  const runner = await createSandboxRunner(await loadConfig({ cwd: project, env: {} }), env)
  return async (command: string) => {
    const r = await runner.exec(command)
    const out = r.structuredContent as { stdout: string; stderr: string } | undefined
    return { text: (r.content as Array<{ text: string }>)[0]!.text, stdout: out?.stdout ?? '', isError: r.isError }
  }
}

describe.runIf(hasBwrap)('every state root is hidden wherever it lies (real bubblewrap)', () => {
  it('the workspace is the home folder: the OAuth store, its key and the chat history are out of reach', async () => {
    const home = folder('myc-roots-home-')
    const env = { HOME: home }
    const store = await logIn(env)
    const key = readFileSync(store.keyFile, 'utf8')
    mkdirSync(path.join(home, '.mycelium'))
    writeFileSync(path.join(home, '.mycelium', 'history'), 'my secret prompt\n')
    mkdirSync(path.join(home, '.config', 'other'), { recursive: true })
    writeFileSync(path.join(home, '.config', 'other', 'settings'), 'visible\n')
    const exec = await runnerFor(home, env)
    const r = await exec(
      'cat ~/.config/mycelium/oauth-token.key ~/.config/mycelium/oauth-tokens.json ~/.mycelium/history; ls -a ~/.config/mycelium; cat .config/other/settings; echo evil > .config/mycelium/oauth-token.key; echo end',
    )
    expect(r.stdout).not.toContain(key.trim())
    expect(r.stdout).not.toMatch(/entries|my secret prompt|oauth-token/)
    // Benign twin: the rest of the home folder reads as before.
    expect(r.stdout).toMatch(/visible\nend\n$/)
    expect(readFileSync(store.keyFile, 'utf8')).toBe(key)
    expect((await store.get(SERVER))?.tokens.access_token).toBe('at-secret')
    // The probe can fail: the same read outside the sandbox finds the key.
    expect(execFileSync('cat', [store.keyFile], { encoding: 'utf8' })).toBe(key)
  })

  it('XDG_CONFIG_HOME inside the workspace: the key can be neither read nor overwritten, nor a store made', async () => {
    const ws = folder('myc-roots-ws-')
    const env = { HOME: folder('myc-roots-elsewhere-'), XDG_CONFIG_HOME: path.join(ws, 'xdg') }
    const store = await logIn(env)
    const key = readFileSync(store.keyFile, 'utf8')
    const exec = await runnerFor(ws, env)
    const r = await exec(
      'cat xdg/mycelium/*; echo evil > xdg/mycelium/oauth-token.key; rm -rf xdg/mycelium; echo ok > xdg/other.txt; cat xdg/other.txt',
    )
    expect(r.stdout).not.toContain(key.trim())
    expect(r.stdout, r.text).toBe('ok\n')
    expect(readFileSync(store.keyFile, 'utf8')).toBe(key)
    // With no store yet, none can be planted for myc to read later.
    const fresh = folder('myc-roots-ws-')
    const plant = await runnerFor(fresh, { HOME: env.HOME, XDG_CONFIG_HOME: path.join(fresh, 'xdg') })
    await plant('mkdir -p xdg/mycelium; echo planted > xdg/mycelium/oauth-token.key; echo end')
    expect(existsSync(path.join(fresh, 'xdg', 'mycelium'))).toBe(false)
  })

  it('renaming a folder above a root moves nothing away: a nested config, XDG_CONFIG_HOME two levels down', async () => {
    const ws = folder('myc-roots-ws-')
    const proj = path.join(ws, 'proj')
    mkdirSync(path.join(proj, 'skills'), { recursive: true })
    mkdirSync(path.join(ws, 'src'))
    const config = JSON.stringify({ sandbox: { workspace: '..' } })
    writeFileSync(path.join(proj, 'mycelium.config.json'), config)
    const env = { HOME: folder('myc-roots-home-'), XDG_CONFIG_HOME: path.join(ws, 'cfg', 'xdg') }
    const store = await logIn(env)
    const key = readFileSync(store.keyFile, 'utf8')
    const runner = await createSandboxRunner(await loadConfig({ cwd: proj, env: {} }), env)
    const r = await runner.exec(
      [
        'mv proj proj-old; mkdir -p proj/skills/pwn',
        `echo '{"skills":{"dirs":["pwn"]}}' > proj/mycelium.config.json`,
        'mv cfg cfg-old; mv cfg/xdg cfg/x2; mkdir -p cfg/xdg/mycelium; echo planted > cfg/xdg/mycelium/oauth-token.key',
        'mv src src2 && echo renamed',
      ].join('; '),
    )
    const stdout = (r.structuredContent as { stdout: string }).stdout
    // Benign twin: a folder with nothing guarded below it renames as ever.
    expect(stdout).toBe('renamed\n')
    expect(existsSync(path.join(ws, 'src2'))).toBe(true)
    expect(readFileSync(path.join(proj, 'mycelium.config.json'), 'utf8')).toBe(config)
    expect(readFileSync(store.keyFile, 'utf8')).toBe(key)
    for (const gone of ['proj-old', 'cfg-old', 'cfg/x2', 'proj/skills/pwn'])
      expect(existsSync(path.join(ws, gone)), gone).toBe(false)
  })

  it('a root outside both the workspace and the home folder is hidden too, its neighbours are not', async () => {
    const state = folder('myc-roots-state-', '/var/tmp')
    mkdirSync(path.join(state, 'mycelium'))
    writeFileSync(path.join(state, 'mycelium', 'kept.json'), 'state secret\n')
    writeFileSync(path.join(state, 'neighbour.txt'), 'neighbour\n')
    const exec = await runnerFor(folder('myc-roots-ws-'), { HOME: folder('myc-roots-home-'), XDG_STATE_HOME: state })
    const r = await exec(`cat ${state}/mycelium/kept.json; cat ${state}/neighbour.txt`)
    expect(r.stdout).toBe('neighbour\n')
  })

  it('a workspace inside a state root, or equal to one, is refused and named', async () => {
    const data = folder('myc-roots-data-')
    const inside = path.join(data, 'mycelium', 'ws')
    mkdirSync(inside, { recursive: true })
    const env = { HOME: folder('myc-roots-home-'), XDG_DATA_HOME: data }
    for (const ws of [inside, path.dirname(inside)]) {
      const r = await (await runnerFor(ws, env))('echo ran')
      expect(r.isError).toBe(true)
      expect(r.text).toMatch(/lies in .*mycelium, which holds myc's own state; set sandbox\.workspace/)
    }
  })
})
