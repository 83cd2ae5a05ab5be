import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { chatRecordsDir } from '../../src/agent/chat-store.js'
import { loadConfig } from '../../src/config/load.js'
import { projectState, stateRoots, userState, type StateRoot } from '../../src/config/state-roots.js'
import { roleDefinitionFile } from '../../src/inspect/reports.js'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { TokenStore } from '../../src/oauth/token-store.js'
import { openMemoryStore, watchedFolders } from '../../src/principal/policy-mode.js'

/** Every place an object of the registry names, however deep. */
const placesOf = (state: object): StateRoot[] =>
  Object.values(state)
    .flat()
    .filter((p): p is StateRoot => p !== undefined)

async function project() {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-roots-'))
  writeFileSync(
    path.join(dir, 'mycelium.config.yaml'),
    'skills: { dirs: [skills, ../shared-skills] }\nmemory: { dir: data/memory }\nagent: { sessionsDir: /var/tmp/x/sessions }\naudit: { file: logs/audit.jsonl }\nsandbox: { hide: [.env, secrets/] }\n',
  )
  return loadConfig({ cwd: dir, env: {} })
}

describe('the registry of state roots', () => {
  it('places a project’s state from its config, relative to the config’s folder', async () => {
    const loaded = await project()
    const state = projectState(loaded)
    const at = (p: string) => path.resolve(loaded.dir, p)
    expect(state.configFiles.map((f) => f.path)).toEqual([at('mycelium.config.yaml'), at('mycelium.config.json')])
    expect(state.skillsDirs.map((d) => d.path)).toEqual([at('skills'), at('../shared-skills')])
    expect(state.memoryDir.path).toBe(at('data/memory'))
    expect(state.sessionsDir.path).toBe('/var/tmp/x/sessions')
    expect(state.auditFile?.path).toBe(at('logs/audit.jsonl'))
    expect(state.hidden.map((h) => [h.path, h.kind])).toEqual([
      [at('.env'), 'file'],
      [at('secrets'), 'dir'],
    ])
  })

  it('places a person’s state in their config, state and data folders, and ~/.mycelium', () => {
    const linux = userState({}, 'linux', '/home/a')
    expect(placesOf(linux).map((p) => p.path)).toEqual([
      '/home/a/.config/mycelium',
      '/home/a/.config/mycelium/oauth-tokens.json',
      '/home/a/.config/mycelium/secrets.json',
      '/home/a/.config/mycelium/oauth-token.key',
      '/home/a/.local/state/mycelium',
      '/home/a/.local/share/mycelium',
      '/home/a/.mycelium',
      '/home/a/.mycelium/history',
    ])
    const xdg = userState({ XDG_CONFIG_HOME: '/c', XDG_STATE_HOME: '/s', XDG_DATA_HOME: 'relative' }, 'linux', '/h')
    expect([xdg.configDir.path, xdg.stateDir.path, xdg.dataDir.path]).toEqual([
      '/c/mycelium',
      '/s/mycelium',
      '/h/.local/share/mycelium',
    ])
    expect(userState({ HOME: '/from-env' }, 'linux').homeDir.path).toBe('/from-env/.mycelium')
    const win = userState({ APPDATA: 'C:\\R', LOCALAPPDATA: 'C:\\L' }, 'win32', 'C:\\U')
    expect([win.configDir.path, win.dataDir.path]).toEqual([
      path.join('C:\\R', 'mycelium'),
      path.join('C:\\L', 'mycelium'),
    ])
  })

  it('hides every place of both, by construction: a new place is a root without more code', async () => {
    const loaded = await project()
    const env = { HOME: '/home/a', XDG_STATE_HOME: '/srv/state' }
    const roots = stateRoots(loaded, env, 'linux').map((r) => r.path)
    for (const p of [...placesOf(projectState(loaded)), ...placesOf(userState(env, 'linux'))])
      expect(roots, p.holds).toContain(p.path)
    for (const r of stateRoots(loaded, env, 'linux')) expect(r).toMatchObject({ access: 'hidden' })
  })

  it('is where myc really keeps each kind of state', async () => {
    const loaded = await project()
    const env = { HOME: '/home/a', XDG_CONFIG_HOME: '/srv/cfg' }
    const roots = stateRoots(loaded, env, 'linux').map((r) => r.path)
    const under = (p: string) => roots.some((r) => p === r || p.startsWith(`${r}${path.sep}`))
    const store = TokenStore.forUser('local', env)
    expect([store.file, store.keyFile]).toEqual([userState(env).oauthTokens.path, userState(env).sealedKey.path])
    const secrets = SecretStore.forUser(env)
    expect([secrets.file, secrets.keyFile]).toEqual([userState(env).secrets.path, userState(env).sealedKey.path])
    for (const p of [
      store.file,
      store.keyFile,
      secrets.file,
      chatRecordsDir(loaded),
      openMemoryStore(loaded).dir,
      roleDefinitionFile(loaded, 'dev'),
      ...watchedFolders(loaded),
      userState(env).chatHistory.path,
      projectState(loaded).contextDir.path,
    ])
      expect(under(p), p).toBe(true)
  })
})
