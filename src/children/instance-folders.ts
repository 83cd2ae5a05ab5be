import { createHash } from 'node:crypto'
import { mkdir, rm } from 'node:fs/promises'
import path from 'node:path'

/**
 * The folders of one instance of a scoped server (docs/team.md): its own
 * HOME and scratch folder, under myc's state (config/state-roots.ts,
 * `instancesDir`: hidden from every command myc runs), one folder per server
 * and person or session, removed with the instance unless `persist`.
 */
export interface InstanceFolders {
  /** `<instances>/<server>/<who>`: the instance's whole folder (what a sandbox binds). */
  root: string
  /** Its HOME. */
  home: string
  /** Its TMPDIR. */
  scratch: string
}

/**
 * A folder's name for a person or session: what it is called, made safe for
 * a file name, and a digest of the whole, so that two names made alike by
 * the first part never share a folder.
 */
function folderName(who: string): string {
  const readable = who.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40)
  return `${readable}-${createHash('sha256').update(who).digest('hex').slice(0, 16)}`
}

/** The folders of `server`'s instance for `who` (pure). */
export function instanceFolders(dir: string, server: string, who: string): InstanceFolders {
  const root = path.join(dir, server, folderName(who))
  return { root, home: path.join(root, 'home'), scratch: path.join(root, 'tmp') }
}

/** Makes them (mode 0700: readable by myc's user only). */
export async function makeFolders(folders: InstanceFolders): Promise<void> {
  await mkdir(folders.home, { recursive: true, mode: 0o700 })
  await mkdir(folders.scratch, { recursive: true, mode: 0o700 })
}

/** Removes them and all they hold. */
export async function removeFolders(folders: InstanceFolders): Promise<void> {
  await rm(folders.root, { recursive: true, force: true })
}
