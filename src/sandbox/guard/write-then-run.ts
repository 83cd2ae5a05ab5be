import { readsProgramFromStdin } from './interpreters.js'
import { normalize, valuesOf } from './paths.js'
import { optionValue, scanOptions } from './options.js'
import { writtenBy } from './targets.js'
import { INTERPRETERS, literal, type SimpleCommand, type Word } from './shell-words.js'

/**
 * Write-then-run: a command line that writes a file and then runs it
 * (`echo … > x.sh && sh x.sh`, `printf … > x; chmod +x x; ./x`, a Makefile
 * then `make`, a git hook then `git commit`, `curl -o x.sh … && sh x.sh`)
 * runs a program the guard did not read. So does `make -f -` or `--eval`.
 */

/** A path as a comparable key: absolute, or relative to the workspace; undefined when the working directory is unknown. */
export function pathKey(value: string, wd: string | null | undefined): string | undefined {
  if (value.startsWith('~')) return value
  let p = value
  if (!p.startsWith('/')) {
    if (wd === null) return undefined
    if (wd && wd !== '.') p = `${wd}/${p}`
  }
  const n = normalize(p)
  return `${n.absolute ? '/' : ''}${n.escapes ? '../' : ''}${n.parts.join('/')}`
}

const MAKEFILES = ['GNUmakefile', 'makefile', 'Makefile']
/** make reading its rules from stdin or a descriptor: a Makefile no one can read. */
const FROM_STDIN = /^(-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/self\/fd\/\d+)$/
const MAKE_SPEC = {
  short: 'fCIjlWoE',
  long: [
    '--file',
    '--makefile',
    '--directory',
    '--include-dir',
    '--jobs',
    '--load-average',
    '--what-if',
    '--new-file',
    '--assume-new',
    '--old-file',
    '--assume-old',
    '--eval',
  ],
  permute: true,
}

/** The files a command runs as a program, with `unreadable` when it runs one the guard cannot read at all. */
function programsRun(c: SimpleCommand): { files: Word[]; prefixes: string[]; unreadable: boolean } {
  const none = { files: [], prefixes: [], unreadable: false }
  if (c.path) return { ...none, files: [literal(c.path)] }
  if (c.name === 'source' || c.name === '.') return fromFile(c.args[0])
  if (c.name === 'make' || c.name === 'gmake') {
    const s = scanOptions(c.args, 0, MAKE_SPEC)
    const given = s.options
      .filter((o) => ['-f', '--file', '--makefile'].includes(o.name) && o.value)
      .map((o) => o.value!)
    const dir = optionValue(s, ['-C', '--directory'])
    const unreadable =
      s.options.some((o) => o.name === '--eval' || o.name === '-E') ||
      given.some((w) => !w.dynamic && FROM_STDIN.test(w.text))
    const files =
      given.length > 0
        ? given
        : MAKEFILES.map((m) => (dir ? (dir.dynamic ? dir : literal(`${dir.text}/${m}`)) : literal(m)))
    return { files, prefixes: [], unreadable }
  }
  if (c.name === 'git') return { ...none, prefixes: ['.git/hooks/'] }
  // `crontab FILE` runs FILE later; `crontab -` or `… | crontab` a table the guard does not read.
  if (c.name === 'crontab') {
    if (c.args.some((a) => ['-l', '-r', '-e'].includes(a.text))) return none
    const file = c.args.find((a) => a.dynamic || !a.text.startsWith('-') || a.text === '-')
    return !file || file.text === '-' ? { ...none, unreadable: true } : fromFile(file)
  }
  if ((c.name === 'at' || c.name === 'batch') && c.args.some((a) => a.text === '-f'))
    return fromFile(c.args[c.args.findIndex((a) => a.text === '-f') + 1])
  // `sh < x.sh`, `cat x.sh | sh`: a program read on stdin from a file.
  if (INTERPRETERS.has(c.name) && readsProgramFromStdin(c))
    return {
      ...none,
      files: [...(c.writes ?? []).filter((w) => w.read).map((w) => w.target), ...c.pipedFrom.flatMap((p) => p.args)],
    }
  if (!INTERPRETERS.has(c.name) || c.program !== undefined) return none
  if (c.args.some((a) => !a.dynamic && (/^-[a-zA-Z]*[ce]$/.test(a.text) || a.text === '-m'))) return none
  return fromFile(c.args.find((a) => a.dynamic || !a.text.startsWith('-')))
}

/** A script read from a file: unreadable when the file is a pipe (`bash <(…)`, `. /dev/stdin`). */
function fromFile(script: Word | undefined): { files: Word[]; prefixes: string[]; unreadable: boolean } {
  return {
    files: script ? [script] : [],
    prefixes: [],
    unreadable: script !== undefined && !script.dynamic && FROM_STDIN.test(script.text),
  }
}

/**
 * Marks each command that runs a file written earlier in the same check:
 * with `runsContent` when what was written is known (to be read back as
 * code), else with `runsWritten`; and each that runs a program from stdin
 * or a pipe the guard cannot read (`make -f -`).
 */
export function markWriteThenRun(commands: readonly SimpleCommand[]): void {
  // Path key → what was written there, when known.
  const written = new Map<string, string | undefined>()
  let unknownWrite = false
  for (const c of commands) {
    const run = programsRun(c)
    let hit = run.unreadable
    const contents: string[] = []
    for (const f of run.files) {
      const values = valuesOf(f)
      if (!values) hit ||= unknownWrite
      else
        for (const v of values) {
          const k = pathKey(v, c.wd)
          if (k === undefined || !written.has(k)) continue
          const text = written.get(k)
          if (text === undefined) hit = true
          else contents.push(text)
        }
    }
    for (const p of run.prefixes) if ([...written.keys()].some((w) => w.includes(p))) hit = true
    if (hit) c.runsWritten = true
    else if (contents.length > 0) c.runsContent = contents
    const known = new Map((c.writes ?? []).map((w) => [w.target, w.content]))
    for (const w of writtenBy(c)) {
      const values = valuesOf(w)
      if (!values) unknownWrite = true
      else
        for (const v of values) {
          const k = pathKey(v, c.wd)
          if (k !== undefined) written.set(k, values.length === 1 ? known.get(w) : undefined)
        }
    }
  }
}
