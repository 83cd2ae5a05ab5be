import { hasOption, optionValue, scanOptions, type OptionSpec } from './options.js'
import type { SimpleCommand, Word } from './shell-words.js'

/**
 * What a command destroys: the paths it deletes, moves away, truncates or
 * overwrites. `strict` targets must be known and inside the workspace;
 * a plain `rm` of files (`rm -f x`, `xargs rm`) is lenient: only a glob
 * that sweeps a folder outside the workspace counts against it.
 */
export interface Target {
  word: Word
  strict: boolean
}

/** A word whose value follows a prefix (`of=/dev/sda` → `/dev/sda`). */
function after(w: Word, prefix: string): Word {
  const strip = (v: string) => (v.startsWith(prefix) ? v.slice(prefix.length) : v)
  return { ...w, text: strip(w.text), ...(w.values ? { values: w.values.map(strip) } : {}) }
}
/** `host:path`, `rsync://…`: a remote path, outside the workspace whatever it names. */
const REMOTE = /^[^/]*:/
const remote = (w: Word): Word =>
  !w.dynamic && REMOTE.test(w.text) && !w.text.startsWith('./')
    ? { text: '/remote', dynamic: false, inner: w.inner }
    : w

const ops = (c: SimpleCommand, spec: OptionSpec) => scanOptions(c.args, 0, { ...spec, permute: true })
const strict = (word: Word): Target => ({ word, strict: true })
/** The destination of a copy: `-t DIR`, else the last operand of two or more. */
function destination(c: SimpleCommand, spec: OptionSpec): Word | undefined {
  const s = ops(c, spec)
  return optionValue(s, ['-t', '--target-directory']) ?? (s.operands.length >= 2 ? s.operands.at(-1) : undefined)
}

const RSYNC: OptionSpec = {
  short: 'efMTB',
  long: [
    '--rsh',
    '--exclude',
    '--include',
    '--filter',
    '--files-from',
    '--exclude-from',
    '--include-from',
    '--backup-dir',
    '--suffix',
    '--chmod',
    '--chown',
    '--timeout',
    '--port',
    '--password-file',
    '--log-file',
    '--out-format',
    '--remote-option',
    '--partial-dir',
    '--temp-dir',
    '--compare-dest',
    '--copy-dest',
    '--link-dest',
    '--max-size',
    '--min-size',
    '--max-delete',
    '--bwlimit',
    '--iconv',
    '--usermap',
    '--groupmap',
    '--info',
    '--debug',
    '--rsync-path',
  ],
}
const CHMOD: OptionSpec = { long: ['--reference', '--from'] }

type Finder = (c: SimpleCommand) => Target[]
const BY_NAME: Record<string, Finder> = {
  rm: (c) => {
    const s = ops(c, {})
    const recursive = s.options.some((o) => ['-r', '-R', '--recursive'].includes(o.name))
    return s.operands.map((word) => ({ word, strict: recursive }))
  },
  unlink: (c) => ops(c, {}).operands.map((word) => ({ word, strict: false })),
  shred: (c) => ops(c, { short: 'ns', long: ['--iterations', '--size', '--random-source'] }).operands.map(strict),
  truncate: (c) => ops(c, { short: 'sr', long: ['--size', '--reference'] }).operands.map(strict),
  mv: (c) => {
    const s = ops(c, { short: 'tS', long: ['--target-directory', '--suffix'] })
    const to = optionValue(s, ['-t', '--target-directory'])
    return [...s.operands, ...(to ? [to] : [])].map(strict)
  },
  cp: (c) =>
    [destination(c, { short: 'tS', long: ['--target-directory', '--suffix'] })]
      .filter((w) => w !== undefined)
      .map(strict),
  install: (c) =>
    [
      destination(c, {
        short: 'tmogS',
        long: ['--target-directory', '--mode', '--owner', '--group', '--suffix', '--strip-program'],
      }),
    ]
      .filter((w) => w !== undefined)
      .map(strict),
  ln: (c) => {
    const s = ops(c, { short: 'tS', long: ['--target-directory', '--suffix'] })
    const force = s.options.some((o) => o.name === '-f' || o.name === '--force')
    return force
      ? [destination(c, { short: 'tS', long: ['--target-directory', '--suffix'] })]
          .filter((w) => w !== undefined)
          .map(strict)
      : []
  },
  rsync: (c) => {
    const s = ops(c, RSYNC)
    const all = s.operands.map(remote)
    const removesSources = hasOption(s, ['--remove-source-files', '--remove-sent-files'])
    if (all.length < 2) return []
    return (removesSources ? all : all.slice(-1)).map(strict)
  },
  dd: (c) => c.args.filter((w) => w.text.startsWith('of=')).map((w) => strict(after(w, 'of='))),
  tee: (c) => {
    const s = ops(c, { long: ['--output-error'] })
    return hasOption(s, ['-a', '--append']) ? [] : s.operands.map(strict)
  },
  chmod: (c) => recursiveOwnership(c),
  chown: (c) => recursiveOwnership(c),
  chgrp: (c) => recursiveOwnership(c),
  find: (c) => {
    const roots: Word[] = []
    for (const w of c.args) {
      if (!w.dynamic && (w.text.startsWith('-') || w.text === '(' || w.text === '!')) {
        if (/^-([HLP]|O\d*)$/.test(w.text)) continue
        break
      }
      roots.push(w)
    }
    const deletes = c.args.some((w) => !w.dynamic && w.text === '-delete')
    return deletes ? (roots.length > 0 ? roots : [{ text: '.', dynamic: false, inner: [] }]).map(strict) : []
  },
  tar: (c) => {
    const a = c.args.map((w) => (w.dynamic ? '' : w.text))
    const extracts =
      /^[^-]*x/.test(a[0] ?? '') || a.some((x) => /^-[A-Za-z]*x/.test(x) || x === '--extract' || x === '--get')
    if (!extracts) return tarArchive(c, a)
    if (a.some((x) => x === '-P' || x === '--absolute-names' || /^-[A-Za-z]*P/.test(x)))
      return [strict({ text: '$__members', dynamic: true, inner: [] })]
    const at = a.findIndex((x) => x === '-C' || x === '--directory' || x.startsWith('--directory='))
    const dir =
      at === -1 ? undefined : a[at]!.startsWith('--directory=') ? after(c.args[at]!, '--directory=') : c.args[at + 1]
    return dir ? [strict(child(dir))] : []
  },
  unzip: (c) => {
    const at = c.args.findIndex((w) => w.text === '-d')
    return at !== -1 && c.args[at + 1] ? [strict(child(c.args[at + 1]!))] : []
  },
  perl: (c) => {
    if (!c.args.some((w) => !w.dynamic && inPlace(w.text))) return []
    return c.args.filter((w) => (w.dynamic || !w.text.startsWith('-')) && w.text !== c.program).map(strict)
  },
  // `git -C DIR clean -fdx`, `git --work-tree=DIR reset --hard`: what git deletes or overwrites lies in DIR.
  git: (c) => {
    const a = c.args.map((w) => (w.dynamic ? '' : w.text))
    const sub = a.find((x, i) => !x.startsWith('-') && a[i - 1] !== '-C' && a[i - 1] !== '-c')
    if (!['clean', 'reset', 'checkout', 'restore', 'stash', 'switch'].includes(sub ?? '')) return []
    return c.args
      .flatMap((w, i) => (a[i - 1] === '-C' ? [w] : a[i]!.startsWith('--work-tree=') ? [after(w, '--work-tree=')] : []))
      .map((w) => strict(child(w)))
  },
  // Output files named by an option: a download, a sorted file, a compiled program, a new archive.
  curl: (c) =>
    output(
      c,
      { short: 'oHdXuAeETwbcrKmxy', long: ['--output', '--header', '--data', '--user', '--user-agent', '--referer'] },
      ['-o', '--output'],
    ),
  wget: (c) =>
    output(
      c,
      { short: 'OoaPeUtTwQlA', long: ['--output-document', '--header', '--user', '--user-agent', '--referer'] },
      ['-O', '--output-document'],
    ),
  sort: (c) =>
    output(
      c,
      { short: 'okStT', long: ['--output', '--key', '--field-separator', '--buffer-size', '--temporary-directory'] },
      ['-o', '--output'],
    ),
  sed: (c) => {
    const s = ops(c, { short: 'efl', long: ['--expression', '--file', '--line-length'], attached: 'i' })
    if (!hasOption(s, ['-i', '--in-place'])) return []
    const scripted = hasOption(s, ['-e', '--expression', '-f', '--file'])
    return s.operands.slice(scripted ? 0 : 1).map(strict)
  },
}

/** Deleting tools with rm's meaning: every operand goes. */
for (const name of ['rimraf', 'srm', 'wipe', 'trash', 'trash-put', 'del'])
  BY_NAME[name] = (c) => ops(c, {}).operands.map(strict)

/** What lands inside a folder: a child of it (`tar -C /usr`, `unzip -d /etc` overwrite what is there). */
const child = (w: Word): Word => ({
  ...w,
  text: `${w.text}/any`,
  ...(w.values ? { values: w.values.map((v) => `${v}/any`) } : {}),
})

for (const name of ['gcc', 'g++', 'cc', 'c++', 'clang', 'clang++', 'rustc'])
  BY_NAME[name] = (c) => output(c, { short: 'oIDLlUxW' }, ['-o'])
for (const name of ['ruby', 'gawk']) BY_NAME[name] = BY_NAME.perl!

/** The archive `tar c` writes: `tar czf FILE`, `tar -cf FILE`, `tar --file=FILE` (not `-`, stdout). */
function tarArchive(c: SimpleCommand, a: readonly string[]): Target[] {
  const creates =
    /^[^-]*[cru]/.test(a[0] ?? '') ||
    a.some((x) => /^-[A-Za-z]*[cru]/.test(x) || ['--create', '--append', '--update'].includes(x))
  if (!creates) return []
  const eq = a.findIndex((x) => x.startsWith('--file='))
  const flag = a.findIndex((x) => /^-[A-Za-z]*f$/.test(x) || x === '--file')
  const file =
    eq !== -1
      ? after(c.args[eq]!, '--file=')
      : /^[^-]*f/.test(a[0] ?? '')
        ? c.args[1]
        : flag !== -1
          ? c.args[flag + 1]
          : undefined
  return file && !(!file.dynamic && file.text === '-') ? [strict(file)] : []
}

/** `-pi`, `-i.bak`: an in-place edit flag in a cluster, before a letter whose value follows it (`-Mstrict` is not one). */
function inPlace(t: string): boolean {
  if (!/^-[a-zA-Z]/.test(t)) return false
  for (const c of t.slice(1)) {
    if (c === 'i') return true
    if ('eEMmIxCdDVFlrK0'.includes(c)) return false
  }
  return false
}

/** The file an output option names (`-o FILE`, `--output=FILE`), when given and not stdout. */
function output(c: SimpleCommand, spec: OptionSpec, names: readonly string[]): Target[] {
  const out = optionValue(ops(c, spec), names)
  return out && !(!out.dynamic && out.text === '-') ? [strict(out)] : []
}

/** `chmod -R MODE PATHS…`, `chown -R OWNER PATHS…` (with `--reference`, every operand is a path). */
function recursiveOwnership(c: SimpleCommand): Target[] {
  const s = ops(c, CHMOD)
  if (!s.options.some((o) => o.name === '-R' || o.name === '--recursive')) return []
  return s.operands.slice(hasOption(s, ['--reference']) ? 0 : 1).map(strict)
}

/** Everything a command destroys: by what it is, and where its output goes (`> file` truncates it). */
export function destroyedBy(c: SimpleCommand): Target[] {
  const own = Object.hasOwn(BY_NAME, c.name) ? BY_NAME[c.name]!(c) : []
  return [...own, ...(c.writes ?? []).filter((w) => !w.append && !w.read).map((w) => strict(w.target))]
}

/** Everything a command writes to, appending or not: what it destroys, `>>` targets, `tee -a`, `curl -o`. */
export function writtenBy(c: SimpleCommand): Word[] {
  const extra: Word[] = (c.writes ?? []).filter((w) => w.append && !w.read).map((w) => w.target)
  if (c.name === 'tee') extra.push(...ops(c, { long: ['--output-error'] }).operands)
  // `sysctl -w kernel.x=1`, `sysctl kernel.x=1`: a write to /proc/sys.
  if (c.name === 'sysctl')
    for (const w of c.args)
      if (!w.dynamic && /^[\w./-]+=/.test(w.text))
        extra.push({ text: `/proc/sys/${w.text.split('=')[0]!.replace(/\./g, '/')}`, dynamic: false, inner: [] })
  return [
    ...destroyedBy(c)
      .filter((t) => t.strict)
      .map((t) => t.word),
    ...extra,
  ]
}
