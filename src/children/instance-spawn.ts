import { createHash } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, realpathSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { StdioServerConfig } from '../config/server-schema.js'
import { homeFolder } from '../config/state-roots.js'
import { childSandboxArgs } from '../sandbox/child-args.js'
import { makeFolders, type InstanceFolders } from './instance-folders.js'
import type { CommandHost } from './resolve-command.js'
import { withSecrets, type PersonSecrets, type SecretLookup } from './secret-refs.js'
import { stdioSpawnSpec, textEnv } from './spawn-spec.js'

/** Whether path `p` is folder `dir` or lies in it. */
const inside = (p: string, dir: string) => p === dir || p.startsWith(`${dir}${path.sep}`)

/** What one instance's start needs besides its entry: its folders, its person's secrets, and for `sandbox: true` what it must not see. */
export interface InstanceStart {
  folders: InstanceFolders
  /** This machine's secrets (`${secret:NAME}`). */
  machine: SecretLookup
  /** Its person's (`{ "secret": "NAME" }`). */
  person: PersonSecrets
  host: CommandHost
  configDir: string
  /** Paths a sandboxed instance must not see (myc's state, the secret store, every instance's folder); those that do not exist are skipped. */
  hidden: readonly string[]
  /** Whether bubblewrap works here: undefined when it does, else why not and the fix. */
  sandboxProblem(): Promise<string | undefined>
  /** An empty read-only file to show in place of a hidden file. */
  emptyFile(): string
}

/** The digest of what an entry was filled with (secrets included): a change means a new start is owed. */
export function fingerprint(config: StdioServerConfig): string {
  return createHash('sha256')
    .update(JSON.stringify([config.command, config.args, config.env]))
    .digest('hex')
}

/** The entry with its secrets filled in (a MissingSecretError names a person's secret not kept), before anything is made. */
export async function filledEntry(config: StdioServerConfig, start: InstanceStart): Promise<StdioServerConfig> {
  return (await withSecrets(config, start.machine, start.person)) as StdioServerConfig
}

/**
 * What an instance is spawned with: its entry with the secrets filled in,
 * HOME and TMPDIR its own folders (made now), and, with `sandbox: true`,
 * the whole command under bubblewrap (sandbox/child-args.ts).
 */
export async function instanceEntry(filled: StdioServerConfig, start: InstanceStart): Promise<StdioServerConfig> {
  await makeFolders(start.folders)
  const env = { ...textEnv(filled.env), HOME: start.folders.home, TMPDIR: start.folders.scratch }
  const entry: StdioServerConfig = { ...filled, env }
  if (!filled.sandbox) return entry
  const problem = await start.sandboxProblem()
  if (problem !== undefined) throw new Error(`sandbox: true, and ${problem}`)
  const spec = stdioSpawnSpec(entry, start.host, start.configDir)
  const real = (p: string) => realpathSync(p)
  const home = real(homeFolder(start.host.env, start.host.platform))
  // A command kept in the operator's home (its folder, or a script its arguments name) needs the home there.
  const keepsHome = inside(spec.cwd, home) || inside(spec.command, home) || commandFoldersIn(home, spec).length > 0
  const keptInTmp = commandFoldersIn('/tmp', spec)
  return {
    ...entry,
    command: 'bwrap',
    args: childSandboxArgs({
      own: real(start.folders.root),
      hidden: existing(start.hidden, real(start.folders.root)),
      ...(keepsHome ? {} : { hostHome: home }),
      ...(keptInTmp.length > 0 ? { keptInTmp } : {}),
      emptyFile: start.emptyFile(),
      env: spec.env,
      cwd: spec.cwd,
      argv: [spec.command, ...spec.args],
    }),
    env: {},
    cwd: spec.cwd,
  }
}

/**
 * The folders of a command that lie in `root` (real paths, outermost only):
 * its working folder, its program's folder, and the folder of each
 * argument that names an existing file or folder by an absolute path.
 */
function commandFoldersIn(root: string, spec: { cwd: string; command: string; args: readonly string[] }): string[] {
  const named = [spec.cwd, spec.command, ...spec.args].filter((a) => path.isAbsolute(a))
  const folders = named.flatMap((a) => {
    const stat = statSync(a, { throwIfNoEntry: false })
    return stat ? [realpathSync(stat.isDirectory() ? a : path.dirname(a))] : []
  })
  const realRoot = realpathSync(root)
  const within = [...new Set(folders)]
    .filter((f) => inside(f, realRoot) && f !== realRoot)
    .sort((a, b) => a.length - b.length)
  return within.filter((f, i) => !within.slice(0, i).some((o) => inside(f, o)))
}

/**
 * The paths that exist, real, with their kind, outermost first; never the
 * instance's own folder or one inside it (a folder around it is hidden, and
 * it is bound back), nor one inside a folder hidden already.
 */
function existing(paths: readonly string[], own: string): Array<{ path: string; kind: 'dir' | 'file' }> {
  const found = paths.flatMap((p) => {
    const stat = statSync(p, { throwIfNoEntry: false })
    return stat ? [{ path: realpathSync(p), kind: stat.isDirectory() ? ('dir' as const) : ('file' as const) }] : []
  })
  found.sort((a, b) => a.path.length - b.path.length)
  const out: Array<{ path: string; kind: 'dir' | 'file' }> = []
  for (const f of found)
    if (!inside(f.path, own) && !out.some((o) => o.kind === 'dir' && inside(f.path, o.path))) out.push(f)
  return out
}

/** Makes an empty read-only file to bind over hidden files (one per supervisor: InstanceStart.emptyFile). */
export function makeEmptyFile(): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-empty-')), 'empty')
  closeSync(openSync(file, 'wx', 0o444))
  return file
}
