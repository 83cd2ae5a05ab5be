import type { Word } from './shell-words.js'

/**
 * Where a path lies, for a command that destroys it: in the workspace, in
 * scratch space (`/tmp/…`, `/dev/null`), outside (a system folder, the home
 * folder, an absolute path not under the workspace, above it by `..`), or
 * unknown (an expansion the guard cannot resolve before it runs).
 */
export type Zone = 'inside' | 'scratch' | 'outside' | 'unknown'

/** What the guard knows of where it runs: the workspace (an absolute path), when the caller says. */
export interface GuardOptions {
  cwd?: string
}

/** System paths whose recursive deletion or re-permissioning breaks the machine. */
const SYSTEM = [
  '/',
  '/bin',
  '/boot',
  '/dev',
  '/etc',
  '/home',
  '/lib',
  '/lib32',
  '/lib64',
  '/opt',
  '/proc',
  '/root',
  '/sbin',
  '/srv',
  '/sys',
  '/usr',
  '/var',
  '/System',
  '/Library',
  '/Users',
  '/Applications',
  '/private',
  'C:\\',
  'C:/',
]
const HOME = ['~', '$HOME', '${HOME}']

/** `/etc`, `/etc/`, `/etc/*`, `/*`, `~`, `~/`, `~/*`, `$HOME/*`, `/usr/..`… */
export function isCriticalPath(raw: string): boolean {
  let p = raw.trim()
  if (p === '') return false
  for (const h of HOME) if (p === h || p.startsWith(`${h}/`)) p = `/home-of-user${p.slice(h.length)}`
  p = p
    .replace(/\/+/g, '/')
    .replace(/\/\*+$/, '/')
    .replace(/\/\.$/, '/')
  const n = normalize(p)
  const norm = n.absolute ? `/${n.parts.join('/')}` : n.parts.join('/')
  if (norm === '') return false
  if (norm === '/' || norm === '/*') return true
  if (norm === '/home-of-user') return true
  return SYSTEM.includes(norm) || SYSTEM.includes(`${norm}/`)
}

/** Scratch folders: what lies under them (not the folder itself) is anyone's to delete. */
const SCRATCH = ['/tmp', '/var/tmp', '/dev/shm']
/** Files that swallow or echo writes: writing them destroys nothing. */
const SINK = /^\/dev\/(null|zero|full|random|urandom|stdout|stderr|stdin|tty|fd\/\d+|tcp\/.+|udp\/.+)$/
const GLOB = /[*?[]/
/** A glob segment that can match `..` (`.*`, `.?`, `.[.]*`). */
const DOT_GLOB = /^\.(?:[*?]|\[)/

/** `a//b/./c/../d` → segments; `escapes` when `..` climbs above where a relative path starts. */
export function normalize(path: string): { absolute: boolean; parts: string[]; escapes: boolean } {
  const absolute = path.startsWith('/')
  const parts: string[] = []
  let escapes = false
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue
    if (seg === '..') {
      if (parts.length > 0 && parts.at(-1) !== '..') parts.pop()
      else if (!absolute) escapes = true
    } else parts.push(seg)
  }
  return { absolute, parts, escapes }
}

/** Joins a path to the directory it is relative to (the working directory as the script set it). */
function join(dir: string, path: string): string {
  return path.startsWith('/') || path.startsWith('~') || dir === '.' ? path : `${dir}/${path}`
}

/**
 * A glob stands for what it may match: the folder before the first glob
 * segment and a child of it (`/e*` → a child of `/`); a segment that can
 * match `..` climbs out (`.*` → `..`).
 */
function unglob(path: string): string {
  const segs = path.split('/')
  const at = segs.findIndex((s) => GLOB.test(s))
  if (at === -1) return path
  if (DOT_GLOB.test(segs[at]!)) return [...segs.slice(0, at), '..', 'any'].join('/')
  return [...segs.slice(0, at), 'any'].join('/')
}

const under = (p: string, root: string): boolean => p.startsWith(root === '/' ? '/' : `${root}/`) && p !== root

/** The zone of one path value, run from `wd` (null: unknown), with the workspace `cwd` when known. */
export function zoneOf(value: string, wd: string | null | undefined, opts: GuardOptions = {}): Zone {
  if (value === '') return 'inside'
  // A drive path (`C:\Windows`, `D:/data`) is absolute.
  if (/^[A-Za-z]:[\\/]/.test(value)) return 'outside'
  let p = unglob(value)
  // `~+` is the working directory, `~-` the previous one; `~`, `~/x`, `~user` a home folder.
  if (p === '~+' || p.startsWith('~+/')) p = `.${p.slice(2)}`
  else if (p.startsWith('~-')) return 'unknown'
  else if (p.startsWith('~')) return 'outside'
  if (!p.startsWith('/')) {
    if (wd === null) return 'unknown'
    p = join(wd ?? '.', p)
    if (p.startsWith('~')) return 'outside'
  }
  const n = normalize(p)
  if (!n.absolute) {
    if (!n.escapes) return 'inside'
    if (!opts.cwd) return 'outside'
    return zoneOf(`${opts.cwd}/${p}`, '.', opts)
  }
  const abs = `/${n.parts.join('/')}`
  const cwd = opts.cwd ? `/${normalize(opts.cwd).parts.join('/')}` : undefined
  // A workspace at / or at a system folder would make the machine "inside": then only scratch is.
  if (cwd && !isCriticalPath(cwd) && under(abs, cwd)) return 'inside'
  if (SINK.test(abs) || SCRATCH.some((s) => under(abs, s))) return 'scratch'
  return 'outside'
}

/** The values a word stands for, or undefined when it cannot be known before it runs. */
export function valuesOf(w: Word): readonly string[] | undefined {
  if (w.values) return w.values
  if (w.fromInput) return w.fromInput.within?.map((r) => `${r}/any`)
  return w.dynamic ? undefined : [w.text]
}

/** The worst zone a word may land in: outside beats unknown beats inside. */
export function wordZone(w: Word, wd: string | null | undefined, opts: GuardOptions): Zone {
  const values = valuesOf(w)
  if (!values) return 'unknown'
  const zones = values.map((v) => zoneOf(v, wd, opts))
  return zones.includes('outside')
    ? 'outside'
    : zones.includes('unknown')
      ? 'unknown'
      : zones.includes('inside')
        ? 'inside'
        : 'scratch'
}

/** Kernel files and raw memory: writing them reconfigures or crashes the machine (`/proc/sysrq-trigger`). */
export function isKernelFile(value: string): boolean {
  const n = normalize(value)
  if (!n.absolute) return false
  const abs = `/${n.parts.join('/')}`
  return under(abs, '/proc') || under(abs, '/sys') || /^\/dev\/(mem|kmem|port|kmsg)$/.test(abs)
}

/**
 * Brace expansion of a word's text (`/{etc,usr}` → `/etc`, `/usr`;
 * `{1..3}` → 1 2 3), as bash does before anything else. Quoted braces were
 * replaced by the caller, so every brace here is live.
 */
export function braceExpand(text: string, limit = 257): string[] {
  let depth = 0
  let open = -1
  const commas: number[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '\\') i++
    else if (c === '{') {
      if (depth++ === 0) {
        open = i
        commas.length = 0
      }
    } else if (c === ',' && depth === 1) commas.push(i)
    else if (c === '}' && depth > 0 && --depth === 0) {
      const head = text.slice(0, open)
      const tail = text.slice(i + 1)
      const body = text.slice(open + 1, i)
      let items: string[] | undefined
      if (commas.length > 0)
        items = [
          ...commas.map((_, k) => text.slice(k === 0 ? open + 1 : commas[k - 1]! + 1, commas[k])),
          text.slice(commas.at(-1)! + 1, i),
        ]
      else {
        const seq = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])$/.exec(body)
        if (seq) items = sequence(seq[1]!, seq[2]!, limit)
      }
      if (!items) continue
      // The items and the tail expand on their own (once each), then combine: no blow-up on `{a,b}{a,b}…`.
      const tails = braceExpand(tail, limit)
      const out: string[] = []
      for (const item of items)
        for (const x of braceExpand(item, limit)) for (const t of tails) if (out.length < limit) out.push(head + x + t)
      return out
    }
  }
  return [text]
}

function sequence(a: string, b: string, limit: number): string[] {
  const num = /^-?\d+$/.test(a) && /^-?\d+$/.test(b)
  const from = num ? Number(a) : a.charCodeAt(0)
  const to = num ? Number(b) : b.charCodeAt(0)
  const out: string[] = []
  for (let v = from; out.length < limit && (from <= to ? v <= to : v >= to); v += from <= to ? 1 : -1)
    out.push(num ? String(v) : String.fromCharCode(v))
  return out
}
