import os from 'node:os'
import path from 'node:path'

/**
 * The one registry of where myc keeps state. Every file or folder myc reads
 * to decide policy or keeps for a principal or a person is found through
 * the functions here: a project's state beside its config (`projectState`),
 * and the person's own outside any project (`userState`). `stateRoots` is
 * every place of both, and the sandbox hides each one as a whole wherever it
 * lies relative to the workspace (inside it, equal to it, holding it), so a
 * command myc runs can neither read nor change any of it. A new kind of state
 * is a new place in one of the two objects, and is hidden by that alone;
 * `npm run lint` (scripts/check-state.mjs) refuses code elsewhere in src/
 * that builds a path from the home folder, `XDG_*`, `APPDATA` or the names
 * below. Secrets myc takes from its environment (MYC_TOKEN_KEY,
 * MYC_SESSION_SECRET, tokens) are not places: no command gets myc's
 * environment. A key kept in the OS keychain is reached over D-Bus or the
 * OS's own services, none of which a sandboxed command can reach.
 */

/** One place that holds myc's state: hidden from every command myc runs. */
export interface StateRoot {
  /** Absolute. */
  path: string
  /** What to hold in its place while it does not exist. */
  kind: 'dir' | 'file'
  access: 'hidden'
  /** What it holds, in words. */
  holds: string
}

type Env = Record<string, string | undefined>

/** Config files looked for when no `--config` is given, in order. */
export const DEFAULT_CONFIG_FILES = ['mycelium.config.json', 'mycelium.config.yaml', 'mycelium.config.yml'] as const
/** The folder beside the config that holds a project's state. */
export const PROJECT_STATE_DIR = '.mycelium'
/** `memory.dir` when the config does not say. */
export const DEFAULT_MEMORY_DIR = `${PROJECT_STATE_DIR}/memory`
/** `skills.dirs` when the config does not say. */
export const DEFAULT_SKILLS_DIRS: readonly string[] = ['skills']
/** The folder of a person's own state, under each of their config, state and data folders. */
const APP_DIR = 'mycelium'

/** The parts of a loaded config that place a project's state. */
export interface StateConfig {
  /** The config file; undefined for the embedded default. */
  file: string | undefined
  /** The config's folder (or the working folder without a file). */
  dir: string
  config: {
    skills?: { dirs?: readonly string[] | undefined } | undefined
    memory: { dir: string }
    agent: { sessionsDir?: string | undefined }
    audit: { file?: string | undefined }
    sandbox: { hide?: readonly string[] | undefined }
  }
}

/** Where a project keeps its state. Every place here is a state root. */
export interface ProjectState {
  /** The config file, and the default names that would be found before it in its folder. */
  configFiles: StateRoot[]
  /** `.mycelium/` beside the config. */
  dir: StateRoot
  skillsDirs: StateRoot[]
  /** `roles/<role>.yaml` definitions. */
  rolesDir: StateRoot
  /** One Markdown file per role (`memory.dir`). */
  memoryDir: StateRoot
  /** `agent.sessionsDir`, else `.mycelium/sessions/`. */
  sessionsDir: StateRoot
  /** What a failed workflow leaves for `myc adhoc --context`. */
  contextDir: StateRoot
  /** Scoped servers' instances: each person's or session's HOME and scratch folder (docs/team.md). */
  instancesDir: StateRoot
  /** `audit.file`, when set. */
  auditFile: StateRoot | undefined
  /** `sandbox.hide`: the person's own secrets beside the config. */
  hidden: StateRoot[]
}

/** Where a person keeps myc's state outside any project. Every place here is a state root. */
export interface UserState {
  /** `$XDG_CONFIG_HOME/mycelium`, `~/.config/mycelium`, or `%APPDATA%\mycelium`. */
  configDir: StateRoot
  /** The OAuth token store, in configDir. */
  oauthTokens: StateRoot
  /** Secrets, in configDir: this machine's (what `myc add` keeps) and each person's (`myc secrets`). */
  secrets: StateRoot
  /** The key file the sealed stores share, in configDir (when the key is not in the OS keychain or MYC_TOKEN_KEY). */
  sealedKey: StateRoot
  /** `$XDG_STATE_HOME/mycelium`, `~/.local/state/mycelium`, or `%LOCALAPPDATA%\mycelium\state`: for what a later feature keeps. */
  stateDir: StateRoot
  /** `$XDG_DATA_HOME/mycelium`, `~/.local/share/mycelium`, or `%LOCALAPPDATA%\mycelium`: for what a later feature keeps. */
  dataDir: StateRoot
  /** `~/.mycelium`: `myc chat`'s line history. */
  homeDir: StateRoot
  chatHistory: StateRoot
}

const place = (p: string, kind: 'dir' | 'file', holds: string): StateRoot => ({
  path: p,
  kind,
  access: 'hidden',
  holds,
})

/** The places of a project's state, from its config. */
export function projectState(loaded: StateConfig): ProjectState {
  const at = (p: string, kind: 'dir' | 'file', holds: string) => place(path.resolve(loaded.dir, p), kind, holds)
  const { config } = loaded
  const configs = loaded.file
    ? [loaded.file, ...earlierDefaults(loaded.file)]
    : DEFAULT_CONFIG_FILES.map((n) => path.join(loaded.dir, n))
  return {
    configFiles: configs.map((f) => at(f, 'file', 'the config')),
    dir: at(
      PROJECT_STATE_DIR,
      'dir',
      "the project's state: sessions, memory, failure contexts, the default audit file",
    ),
    skillsDirs: (config.skills?.dirs ?? DEFAULT_SKILLS_DIRS).map((d) => at(d, 'dir', 'skills')),
    rolesDir: at('roles', 'dir', 'role definitions'),
    memoryDir: at(config.memory.dir, 'dir', 'role memory'),
    sessionsDir: at(config.agent.sessionsDir ?? path.join(PROJECT_STATE_DIR, 'sessions'), 'dir', 'agent sessions'),
    contextDir: at(path.join(PROJECT_STATE_DIR, 'context'), 'dir', 'failure contexts of workflows'),
    instancesDir: place(instancesDir(loaded.dir), 'dir', "scoped servers' instances: each one's HOME and scratch"),
    auditFile: config.audit.file ? at(config.audit.file, 'file', 'the audit log') : undefined,
    hidden: (config.sandbox.hide ?? []).map((p) => at(p, p.endsWith('/') ? 'dir' : 'file', 'sandbox.hide')),
  }
}

/** Where the instances of a config's scoped servers keep their folders: `.mycelium/instances` beside it. */
export function instancesDir(configDir: string): string {
  return path.resolve(configDir, PROJECT_STATE_DIR, 'instances')
}

/** The person's home folder: HOME (USERPROFILE on Windows), else the system's account entry. */
export function homeFolder(env: Env = process.env, platform: NodeJS.Platform = process.platform): string {
  return (platform === 'win32' ? env.USERPROFILE : env.HOME) || os.homedir()
}

/** The places of a person's own state, from their environment. */
export function userState(
  env: Env = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homeFolder(env, platform),
): UserState {
  const xdg = (name: string, fallback: string) => {
    const given = env[name]
    return given && path.isAbsolute(given) ? given : path.join(home, fallback)
  }
  const local = env.LOCALAPPDATA || path.join(home, 'AppData', 'Local')
  const configDir =
    platform === 'win32'
      ? path.join(env.APPDATA || path.join(home, 'AppData', 'Roaming'), APP_DIR)
      : path.join(xdg('XDG_CONFIG_HOME', '.config'), APP_DIR)
  const sealed = sealedStoreFiles(configDir)
  const homeDir = path.join(home, PROJECT_STATE_DIR)
  return {
    configDir: place(configDir, 'dir', 'OAuth logins to HTTP children, the secrets of added servers, and their key'),
    oauthTokens: place(sealed.tokens, 'file', 'OAuth logins (sealed)'),
    secrets: place(sealed.secrets, 'file', "secrets, this machine's and each person's (sealed)"),
    sealedKey: place(sealed.key, 'file', "the sealed stores' key"),
    stateDir: place(
      platform === 'win32'
        ? path.join(local, APP_DIR, 'state')
        : path.join(xdg('XDG_STATE_HOME', '.local/state'), APP_DIR),
      'dir',
      "the person's myc state",
    ),
    dataDir: place(
      platform === 'win32' ? path.join(local, APP_DIR) : path.join(xdg('XDG_DATA_HOME', '.local/share'), APP_DIR),
      'dir',
      "the person's myc data",
    ),
    homeDir: place(homeDir, 'dir', "the person's chat history"),
    chatHistory: place(path.join(homeDir, 'history'), 'file', "myc chat's line history"),
  }
}

/** The files of the sealed stores kept in `dir`: the OAuth logins, the secrets of added servers, and the key they share (named for the store that came first). */
export function sealedStoreFiles(dir: string): { tokens: string; secrets: string; key: string } {
  return {
    tokens: path.join(dir, 'oauth-tokens.json'),
    secrets: path.join(dir, 'secrets.json'),
    key: path.join(dir, 'oauth-token.key'),
  }
}

/** Every place of a project's and the person's state: what the sandbox hides. */
export function stateRoots(
  loaded: StateConfig,
  env: Env = process.env,
  platform: NodeJS.Platform = process.platform,
): StateRoot[] {
  const places = [...Object.values(projectState(loaded)), ...Object.values(userState(env, platform))]
  return places.flat().filter((p): p is StateRoot => p !== undefined)
}

/** Default config names found before this one in its folder (a new one there would take its place). */
function earlierDefaults(file: string): string[] {
  const index = (DEFAULT_CONFIG_FILES as readonly string[]).indexOf(path.basename(file))
  return index <= 0 ? [] : DEFAULT_CONFIG_FILES.slice(0, index).map((n) => path.join(path.dirname(file), n))
}
