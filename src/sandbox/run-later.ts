import {
  chmodSync,
  cpSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  type Dirent,
  type Stats,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { ProtectedPath } from './protected-paths.js'

/**
 * What the host's tools would run later from a folder of the workspace, at
 * any depth: a `.git` (folder, file or link: git takes its config, hooks and
 * `core.fsmonitor` from it), an `.envrc` (direnv), or a folder git takes for
 * a repository by itself (a bare layout: `HEAD`, `objects/`, `refs/`; its
 * `config` can name a work tree and an fsmonitor too).
 */
interface Found {
  kind: 'git' | 'envrc' | 'repository'
  /**
   * What identifies it: device and inode, and a link's ctime too (a link is
   * no mount point, so a run can replace it, and a new inode may reuse the
   * number). What was there before is masked, so only a new file has
   * another identity: git's own writes on the host meanwhile change none.
   */
  id: string
}

interface Scan {
  found: Map<string, Found>
  /** Folders the scan could not list, by identity (inode and ctime): what is in them is unknown. */
  unreadable: Map<string, string>
}

/** How one run watches the workspace: what is there before it, then what it left. */
export interface RunLaterWatch {
  /** The repositories and `.envrc` files already there, below the top: read-only for the run. */
  guarded: ProtectedPath[]
  /** After the run: moves out of the workspace what the run created or changed; a warning for each. */
  settle(): string[]
}

/**
 * Scans the workspace before a run (nothing under `skip`, myc's hidden
 * state, and nothing `isPlaceholder` owns), and again when it settles. What
 * was there before is guarded read-only during the run (a repository that
 * is the workspace itself: its `config` and `hooks/`; the top-level `.git`
 * and `.envrc` are guarded already). Anything found after that was not there
 * before, or is not the same file, is moved to a `myc-quarantine-*` folder
 * under the system temp folder: a `.git` or `.envrc` as it is, a bare layout
 * by its `HEAD` (git no longer takes the folder for a repository, and
 * nothing else in it moves). A folder that could not be listed after the
 * run, and was changed during it, is moved as a whole.
 */
export function watchRunLater(
  workspace: string,
  skip: readonly string[],
  isPlaceholder: (p: string) => boolean,
  maxFolders = MAX_FOLDERS,
): RunLaterWatch {
  const scan = (limit?: number) => scanWorkspace(workspace, skip, isPlaceholder, limit)
  const before = scan(maxFolders)
  return { guarded: guardedBefore(workspace, before), settle: () => quarantineNew(before, scan()) }
}

/**
 * The most folders a workspace may hold before a run: each run searches it
 * twice. A larger one (a home folder, `/`) is refused with the fix; after
 * the run there is no limit, whatever the command made is searched.
 */
const MAX_FOLDERS = 100_000

function guardedBefore(workspace: string, before: Scan): ProtectedPath[] {
  const guarded: ProtectedPath[] = []
  const readOnly = (p: string, kind: 'dir' | 'file') => guarded.push({ path: p, kind, access: 'read-only' })
  for (const [p, f] of before.found) {
    if (f.kind === 'repository' && p === workspace) {
      readOnly(path.join(p, 'config'), 'file')
      readOnly(path.join(p, 'hooks'), 'dir')
    } else if (path.dirname(p) !== workspace || f.kind === 'repository')
      readOnly(p, f.kind === 'envrc' ? 'file' : isDir(p) ? 'dir' : 'file')
  }
  return guarded
}

function quarantineNew(before: Scan, after: Scan): string[] {
  const warnings: string[] = []
  for (const [p, f] of after.found) {
    if (before.found.get(p)?.id === f.id) continue
    const what = f.kind === 'repository' ? path.join(p, 'HEAD') : p
    const why =
      f.kind === 'repository'
        ? `${p} became a git repository (HEAD, objects, refs) during the command, and git would run what its config names on the host`
        : `${p} was created or changed during the command, and ${f.kind === 'git' ? 'git' : 'direnv'} would run what it says on the host`
    warnings.push(moveAway(what, why))
  }
  for (const [dir, id] of after.unreadable)
    if (before.unreadable.get(dir) !== id)
      warnings.push(
        // Moving a folder to another one needs write access to it (its `..`): the command's own mode is taken back first.
        moveAway(dir, `${dir} could not be searched for repositories after the command changed it`, () =>
          chmodSync(dir, 0o700),
        ),
      )
  return warnings
}

/** Moves `p` to a new `myc-quarantine-*` folder under the system temp folder; the warning that says so. */
export function quarantine(p: string): string {
  const away = path.join(mkdtempSync(path.join(tmpdir(), 'myc-quarantine-')), path.basename(p))
  try {
    renameSync(p, away)
  } catch (error) {
    // Another file system: copy it over, links as links, then remove it here.
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error
    cpSync(p, away, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true })
    rmSync(p, { recursive: true, force: true })
  }
  return away
}

function moveAway(p: string, why: string, first?: () => void): string {
  try {
    first?.()
    return `${why}; myc moved it to ${quarantine(p)}`
  } catch (error) {
    return `${why}; myc could not move it away (${(error as Error).message}): remove it before you run git or direnv there`
  }
}

const GIT_DIR_PARTS = ['HEAD', 'objects', 'refs']

/** Every `.git`, `.envrc` and bare repository layout under `workspace` (links not followed; nothing inside a `.git`). */
function scanWorkspace(
  workspace: string,
  skip: readonly string[],
  isPlaceholder: (p: string) => boolean,
  limit = Infinity,
): Scan {
  const scan: Scan = { found: new Map(), unreadable: new Map() }
  const skipped = (p: string) => skip.some((s) => p === s || p.startsWith(`${s}${path.sep}`))
  const pending = [workspace]
  for (let folders = 0; pending.length > 0; folders++) {
    if (folders >= limit)
      throw new Error(
        `the workspace ${workspace} holds more than ${limit} folders, too many to search for repositories before and after each command: set sandbox.workspace to the project folder`,
      )
    const dir = pending.pop()!
    const entries = listed(dir, scan)
    if (entries === undefined) continue
    if (isRepository(entries)) {
      const id = identity(dir)
      if (id !== undefined) scan.found.set(dir, { kind: 'repository', id })
    }
    for (const e of entries) {
      const p = path.join(dir, e.name)
      if (skipped(p)) continue
      // Case folded: on macOS and Windows `.GIT` is `.git`.
      const name = e.name.toLowerCase()
      const kind = name === '.git' ? 'git' : name === '.envrc' ? 'envrc' : undefined
      if (kind !== undefined) {
        const id = identity(p)
        if (id !== undefined && !isPlaceholder(p)) scan.found.set(p, { kind, id })
      } else if (e.isDirectory()) pending.push(p)
    }
  }
  return scan
}

/**
 * The entries of `dir`; undefined (and the folder noted by identity) when
 * a command in the sandbox could not list it (a mode the command may have
 * set). Root lists everything here, but not in the sandbox, where it holds
 * no capability over files of users its namespace does not map: its
 * access is worked out from the mode bits.
 */
function listed(dir: string, scan: Scan): Dirent[] | undefined {
  const note = () => {
    const st = lstatSync(dir, { throwIfNoEntry: false })
    if (st) scan.unreadable.set(dir, `${st.ino}:${st.ctimeMs}`)
    return undefined
  }
  try {
    if (process.getuid?.() === 0 && !rootMayList(statSync(dir))) return note()
    return readdirSync(dir, { withFileTypes: true })
  } catch (error) {
    // Gone meanwhile: nothing to search.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    return note()
  }
}

/** Whether root without capabilities may list and enter a folder: its read and search bits for owner, group or others. */
function rootMayList(st: Stats): boolean {
  const bits = st.uid === 0 ? st.mode >> 6 : (process.getgroups?.() ?? [0]).includes(st.gid) ? st.mode >> 3 : st.mode
  return (bits & 0o5) === 0o5
}

function isRepository(entries: readonly Dirent[]): boolean {
  return GIT_DIR_PARTS.every((part) => entries.some((e) => e.name === part))
}

function identity(p: string): string | undefined {
  const st = lstatSync(p, { throwIfNoEntry: false })
  if (!st) return undefined
  return st.isSymbolicLink() ? `${st.dev}:${st.ino}:${st.ctimeMs}` : `${st.dev}:${st.ino}`
}

function isDir(p: string): boolean {
  return lstatSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false
}
