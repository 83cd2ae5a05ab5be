import {
  closeSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
} from 'node:fs'
import path from 'node:path'

/**
 * What a sandbox must show, read-only, for a process of this very
 * executable to start in an otherwise empty root (code mode's runner,
 * docs/code-mode.md): the files, each at its real path, and the symbolic
 * links met on the way to them, made again inside (`/lib64` → `usr/lib64`).
 */
export interface OwnFiles {
  files: string[]
  links: Array<{ path: string; target: string }>
}

/** Links followed in a row before a path is given up on (the kernel's own limit). */
const MAX_LINKS = 40

/**
 * The files a process of `executable` needs (Linux): the executable, its ELF
 * interpreter, the shared libraries this process has mapped (it runs the same
 * executable, so it mapped what a new one maps) with the links that name
 * them (`libstdc++.so.6` → `libstdc++.so.6.0.30`), and `extra` (the bundle a
 * Node.js executable runs). Native addons (`.node`) and data files are left
 * out. Throws (ENOENT) when a file is missing.
 */
export function ownFiles(executable: string, extra: readonly string[] = [], maps = readMaps()): OwnFiles {
  const files = new Set<string>()
  const links = new Map<string, string>()
  const libraries = mappedLibraries(maps)
  const interpreter = elfInterpreter(executable)
  for (const p of [executable, ...(interpreter ? [interpreter] : []), ...libraries, ...extra])
    files.add(followLinks(p, links))
  for (const lib of libraries) for (const link of namesOf(lib)) links.set(link.path, link.target)
  return { files: [...files], links: [...links].map(([p, target]) => ({ path: p, target })) }
}

function readMaps(): string {
  return readFileSync('/proc/self/maps', 'utf8')
}

/** Shared libraries in a /proc/PID/maps text (its sixth column, `lib*.so*` files only). */
export function mappedLibraries(maps: string): string[] {
  const found = new Set<string>()
  for (const line of maps.split('\n')) {
    const file = line.trim().split(/\s+/)[5]
    if (file?.startsWith('/') && /\.so(\.\d+)*$/.test(file)) found.add(file)
  }
  return [...found]
}

/**
 * Follows `p` component by component, recording every symbolic link met
 * (its path, whose folders are real, and its target as written); returns the
 * real path at the end.
 */
function followLinks(p: string, links: Map<string, string>, hops = 0): string {
  const parts = path
    .resolve(p)
    .split('/')
    .filter((s) => s !== '')
  let current = '/'
  for (let i = 0; i < parts.length; i++) {
    const next = path.join(current, parts[i]!)
    if (!lstatSync(next).isSymbolicLink()) {
      current = next
      continue
    }
    if (hops >= MAX_LINKS) throw new Error(`too many symbolic links on the way to ${p}`)
    const target = readlinkSync(next)
    links.set(next, target)
    return followLinks(path.resolve(current, target, ...parts.slice(i + 1)), links, hops + 1)
  }
  return current
}

/** The links in a library's own folder that lead to it (the names the dynamic loader looks up). */
function namesOf(library: string): Array<{ path: string; target: string }> {
  const dir = path.dirname(library)
  const real = realpathSync(library)
  const out: Array<{ path: string; target: string }> = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isSymbolicLink()) continue
    const link = path.join(dir, entry.name)
    try {
      if (realpathSync(link) === real) out.push({ path: link, target: readlinkSync(link) })
    } catch {
      // A dangling link in the folder: not one that leads to this library.
    }
  }
  return out
}

const PT_INTERP = 3

/** The ELF interpreter (dynamic loader) a 64-bit little-endian executable names; undefined for a static one or another format. */
export function elfInterpreter(executable: string): string | undefined {
  const fd = openSync(executable, 'r')
  try {
    const read = (length: number, position: number) => {
      const buffer = Buffer.alloc(length)
      readSync(fd, buffer, 0, length, position)
      return buffer
    }
    const header = read(64, 0)
    const elf = header.readUInt32BE(0) === 0x7f454c46 && header[4] === 2 && header[5] === 1
    if (!elf) return undefined
    const phoff = Number(header.readBigUInt64LE(0x20))
    const phentsize = header.readUInt16LE(0x36)
    const phnum = header.readUInt16LE(0x38)
    for (let i = 0; i < phnum; i++) {
      const ph = read(phentsize, phoff + i * phentsize)
      if (ph.readUInt32LE(0) !== PT_INTERP) continue
      const text = read(Number(ph.readBigUInt64LE(0x20)), Number(ph.readBigUInt64LE(8)))
      return text.toString('utf8').replace(/\0+$/, '')
    }
    return undefined
  } finally {
    closeSync(fd)
  }
}
