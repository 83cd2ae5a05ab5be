import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmdirSync,
  statSync,
  unlinkSync,
  utimesSync,
} from 'node:fs'
import path from 'node:path'
import type { ProtectedPath } from './protected-paths.js'
import { quarantine } from './run-later.js'

/** One mount over a protected path, in the order the executor applies them (parents first). */
export interface Mask {
  path: string
  /**
   * `hide-dir`: an empty read-only folder; `hide-file`: an empty read-only
   * file; `read-only`: the path itself, read-only; `pin`: a folder between the
   * workspace and a guarded path, bound onto itself as it is (writable) so
   * that it is a mount point, which no rename or removal can move away.
   */
  kind: 'hide-dir' | 'hide-file' | 'read-only' | 'pin'
}

export interface MaskPlan {
  masks: Mask[]
  /** Ends the run's hold on the placeholders it made; returns a warning for each one found changed. */
  release(): string[]
}

/**
 * Works out the masks for a run: each protected path that exists (links
 * resolved) is masked where it really is; one that does not exist inside the
 * workspace gets a placeholder (see Placeholders) at its first missing
 * folder, masked like the path, so nothing can be created there (not needed
 * when the workspace is read-only: `holdMissing` false). Parents come first,
 * and a path below a placeholder is held by it: myc never makes a
 * placeholder inside another (which would change it, and as root, where
 * 0555 stops nothing, made every run report it as created). In a writable
 * workspace the folders between it and each mask are pinned (see Mask):
 * else `mv parent parent-old` would carry the masks away and leave the
 * guarded names free to be made afresh. Masks under a hidden folder are
 * dropped (nothing there is visible anyway), and pins under a read-only
 * one (nothing there can be renamed). Throws when
 * the workspace itself lies in a hidden path: it would hold nothing but
 * myc's state.
 */
export function planMasks(
  workspace: string,
  paths: readonly ProtectedPath[],
  placeholders: Placeholders,
  holdMissing = true,
): MaskPlan {
  const held: string[] = []
  const found = new Map<string, Mask>()
  const inside = (p: string) => p === workspace || p.startsWith(`${workspace}${path.sep}`)
  // Parents first: a guarded folder that is missing gets its placeholder before anything below it is looked at.
  const byDepth = [...paths].sort((a, b) => depth(path.resolve(a.path)) - depth(path.resolve(b.path)))
  try {
    for (const p of byDepth) {
      const target = path.resolve(p.path)
      const real = realOrUndefined(target)
      if (real !== undefined) {
        if (p.access === 'hidden' && (workspace === real || workspace.startsWith(`${real}${path.sep}`))) {
          throw new Error(
            `the sandbox workspace ${workspace} lies in ${real}, which holds myc's own state; set sandbox.workspace to a folder apart from it`,
          )
        }
        const dir = statSync(real).isDirectory()
        const mask: Mask = { path: real, kind: p.access === 'read-only' ? 'read-only' : dir ? 'hide-dir' : 'hide-file' }
        if (placeholders.holds(real) && placeholders.acquire(real, dir ? 'dir' : 'file')) held.push(real)
        found.set(real, strongest(found.get(real), mask))
        continue
      }
      // Missing: hold its first missing folder (or the path itself) inside the workspace.
      if (!holdMissing) continue
      const top = firstMissing(target)
      if (top === undefined || !inside(top.path)) continue
      // Below a placeholder: that empty, masked stand-in already guards it, and making one inside would change it.
      if (belowPlaceholder(top.path, workspace, held, placeholders)) continue
      const kind = top.path === target ? p.kind : 'dir'
      if (!placeholders.acquire(top.path, kind)) continue
      held.push(top.path)
      const mask: Mask = {
        path: top.path,
        kind: p.access === 'read-only' ? 'read-only' : kind === 'dir' ? 'hide-dir' : 'hide-file',
      }
      found.set(top.path, strongest(found.get(top.path), mask))
    }
  } catch (error) {
    for (const p of held) placeholders.release(p)
    throw error
  }
  const masks = orderMasks(found, workspace, holdMissing)
  let released = false
  return {
    masks,
    release: () => {
      if (released) return []
      released = true
      // Deepest first, so no placeholder is looked at while one it holds is still in it.
      return [...held]
        .sort((a, b) => depth(b) - depth(a))
        .map((p) => placeholders.release(p))
        .filter((w): w is string => w !== undefined)
    },
  }
}

/**
 * Empty stand-ins at protected paths that do not exist yet, made by myc on
 * the host just before a run (an executor can only mask what exists) and
 * taken away after it. A placeholder is read-only, empty, and dated 1970
 * (mtime 0), which is how a second run, or a second myc, knows it for one.
 * Runs that overlap share one; the last to finish removes it. One that is no
 * longer empty after its runs (a race with another myc process on the same
 * folder) is moved out of the workspace, never left in place.
 */
export class Placeholders {
  private readonly held = new Map<string, { count: number; kind: 'dir' | 'file' }>()

  /** True when `p` is one of ours, or looks like a placeholder another myc made. */
  holds(p: string): boolean {
    return this.held.has(p) || isPlaceholder(p)
  }

  /** Makes (or shares) the placeholder at `p`; false when something else is there. */
  acquire(p: string, kind: 'dir' | 'file'): boolean {
    const mine = this.held.get(p)
    if (mine) {
      mine.count++
      return true
    }
    if (existsSync(p)) {
      if (!isPlaceholder(p)) return false
    } else {
      try {
        if (kind === 'dir') mkdirSync(p, { mode: 0o555 })
        else closeSync(openSync(p, 'wx', 0o444))
        utimesSync(p, 0, 0)
      } catch {
        return false
      }
    }
    this.held.set(p, { count: 1, kind: statSync(p).isDirectory() ? 'dir' : 'file' })
    return true
  }

  /** Ends one hold; the last removes the placeholder, or moves it away (with a warning) if it changed. */
  release(p: string): string | undefined {
    const mine = this.held.get(p)
    if (!mine || --mine.count > 0) return undefined
    this.held.delete(p)
    let st
    try {
      st = lstatSync(p)
    } catch {
      return undefined
    }
    try {
      if (isPlaceholder(p)) {
        if (st.isDirectory()) rmdirSync(p)
        else unlinkSync(p)
        return undefined
      }
      return `${p} did not exist before the command and was created during it; myc moved it to ${quarantine(p)}`
    } catch (error) {
      return `could not remove the placeholder ${p}: ${(error as Error).message}`
    }
  }
}

/** An empty folder or file with mtime 0: a placeholder (a user's own empty file is not dated 1970). */
function isPlaceholder(p: string): boolean {
  try {
    const st = lstatSync(p)
    if (st.mtimeMs !== 0) return false
    if (st.isDirectory()) return readdirSync(p).length === 0
    return st.isFile() && st.size === 0
  } catch {
    return false
  }
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p)
  } catch {
    return undefined
  }
}

/**
 * The first missing component of `p` under its deepest existing (real)
 * ancestor. A dangling link is followed to where it points: writing through
 * it would create that.
 */
function firstMissing(p: string, hops = 0): { path: string } | undefined {
  let child = p
  let parent = path.dirname(p)
  while (parent !== child) {
    const real = realOrUndefined(parent)
    if (real !== undefined) {
      const at = path.join(real, path.basename(child))
      let link: string
      try {
        link = readlinkSync(at)
      } catch {
        return { path: at }
      }
      return hops < 8 ? firstMissing(path.resolve(real, link, path.relative(child, p)), hops + 1) : undefined
    }
    child = parent
    parent = path.dirname(parent)
  }
  return undefined
}

/**
 * The folders strictly between the workspace and each of `paths` that lies
 * inside it: what must not be renamed while a guarded path is below it.
 */
export function pinsFor(workspace: string, paths: readonly string[]): string[] {
  const pins = new Set<string>()
  const below = (p: string) => p.startsWith(`${workspace}${path.sep}`)
  for (const p of paths) for (let dir = path.dirname(p); below(dir); dir = path.dirname(dir)) pins.add(dir)
  return [...pins]
}

/** The masks parents first, with their pins (when `pin`), less what a hidden or read-only folder above already covers. */
function orderMasks(found: Map<string, Mask>, workspace: string, pin: boolean): Mask[] {
  const all = new Map(found)
  if (pin)
    for (const dir of pinsFor(workspace, [...found.keys()])) if (!all.has(dir)) all.set(dir, { path: dir, kind: 'pin' })
  const ordered = [...all.values()].sort((a, b) => depth(a.path) - depth(b.path) || a.path.localeCompare(b.path))
  const hidden: string[] = []
  const readOnly: string[] = []
  const masks: Mask[] = []
  for (const m of ordered) {
    const below = (dirs: string[]) => dirs.some((d) => m.path.startsWith(`${d}${path.sep}`))
    if (below(hidden) || (m.kind === 'pin' && below(readOnly))) continue
    if (m.kind === 'hide-dir') hidden.push(m.path)
    if (m.kind === 'read-only') readOnly.push(m.path)
    masks.push(m)
  }
  return masks
}

/** Whether a folder above `p` (inside the workspace) is a placeholder this run holds, or one another run made. */
function belowPlaceholder(p: string, workspace: string, held: readonly string[], placeholders: Placeholders): boolean {
  for (let dir = path.dirname(p); dir.startsWith(`${workspace}${path.sep}`); dir = path.dirname(dir))
    if (held.includes(dir) || placeholders.holds(dir)) return true
  return false
}

function depth(p: string): number {
  return p.split(path.sep).length
}

/** Hidden beats read-only when one path is both. */
function strongest(a: Mask | undefined, b: Mask): Mask {
  if (!a) return b
  return a.kind === 'read-only' ? b : a
}
