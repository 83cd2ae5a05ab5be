import { awkShellCalls, sedShellCalls } from './awk-sed.js'
import { shellCallsIn, type ShellCalls } from './shell-calls.js'
import { deleteCalls } from './code-deletes.js'
import { asScript, INTERPRETERS, unquote, type Runner, type SimpleCommand, type Word } from './shell-words.js'

/** The languages whose command-line code the guard reads for shell calls. */
export type Language = 'python' | 'perl' | 'ruby' | 'node' | 'php' | 'lua' | 'awk' | 'sed'

export function languageOf(name: string): Language | undefined {
  if (/^(python[\d.]*|pypy3?)$/.test(name)) return 'python'
  if (/^perl[\d.]*$/.test(name)) return 'perl'
  if (/^(j?ruby[\d.]*)$/.test(name)) return 'ruby'
  if (name === 'node' || name === 'nodejs' || name === 'bun') return 'node'
  if (/^php[\d.]*$/.test(name)) return 'php'
  if (/^lua(jit|[\d.]*)$/.test(name)) return 'lua'
  if (/^[gmn]?awk$/.test(name)) return 'awk'
  if (name === 'sed' || name === 'gsed') return 'sed'
  return undefined
}

/**
 * Where a language's command line holds code: `code` letters take it
 * (attached too when `codeAttached`: `-cprint(1)`), `value` letters take a
 * value, `attached` letters an attached value only, `digits` letters
 * attached octal digits (`-l0`, `-0777`); `file` options name a program
 * file; `operand`: without code options the first operand is the program
 * (awk, sed); `multiple`: code options add up (`-e a -e b`); `stop` letters
 * end the search (`python -m`).
 */
interface CodeSpec {
  code: string
  codeAttached?: boolean
  longCode?: readonly string[]
  value?: string
  longValue?: readonly string[]
  attached?: string
  digits?: string
  file?: string
  longFile?: readonly string[]
  stop?: string
  multiple?: boolean
  operand?: boolean
}

const SPECS: Record<Language, CodeSpec> = {
  python: { code: 'c', codeAttached: true, value: 'WX', stop: 'm' },
  perl: { code: 'eE', codeAttached: true, digits: 'l0', attached: 'IMmxiCdDVF', multiple: true },
  ruby: { code: 'e', codeAttached: true, value: 'rICE', digits: '0', attached: 'FixKTW', multiple: true },
  node: {
    code: 'ep',
    longCode: ['--eval', '--print'],
    value: 'rC',
    longValue: [
      '--require',
      '--import',
      '--loader',
      '--experimental-loader',
      '--conditions',
      '--title',
      '--input-type',
    ],
  },
  php: { code: 'rRBE', codeAttached: true, value: 'cdzfF', file: 'fF', multiple: true },
  lua: { code: 'e', codeAttached: true, value: 'l', multiple: true },
  awk: {
    code: 'e',
    longCode: ['--source'],
    value: 'FvfiElW',
    attached: 'dDoLp',
    longValue: ['--field-separator', '--assign', '--include', '--load'],
    file: 'fE',
    longFile: ['--file', '--exec'],
    multiple: true,
    operand: true,
  },
  sed: {
    code: 'e',
    longCode: ['--expression'],
    value: 'fl',
    attached: 'i',
    longValue: ['--line-length'],
    file: 'f',
    longFile: ['--file'],
    multiple: true,
    operand: true,
  },
}

/** A code word that is wholly an expansion (`-c "$CODE"`): the program itself is unknown. */
const opaque = (w: Word) => w.dynamic && /^(\$\{?[\w@*#?]+\}?|\$\([\s\S]*\)|`[\s\S]*`)$/.test(unquote(w.text).trim())

/** The program given on the command line, if any, and the word that hides it when it is an expansion. */
function codeOf(lang: Language, args: readonly Word[]): { code: string; hidden?: Word } | undefined {
  const spec = SPECS[lang]
  const parts: Word[] = []
  let file = false
  let i = 0
  const take = (w: Word | undefined) => {
    if (w) parts.push(w)
  }
  for (; i < args.length && (spec.multiple || parts.length === 0); i++) {
    const w = args[i]!
    const t = w.text
    if (w.dynamic || t === '-' || !t.startsWith('-')) break
    if (t === '--') {
      i++
      break
    }
    if (t.startsWith('--')) {
      const eq = t.indexOf('=')
      const name = eq === -1 ? t : t.slice(0, eq)
      const inline = eq === -1 ? undefined : { text: t.slice(eq + 1), dynamic: false, inner: [] }
      if (spec.longCode?.includes(name)) take(inline ?? args[++i])
      else if (spec.longFile?.includes(name)) {
        file = true
        if (!inline) i++
      } else if (spec.longValue?.includes(name) && !inline) i++
      continue
    }
    let usedNext = false
    for (let j = 1; j < t.length; j++) {
      const c = t[j]!
      const rest = t.slice(j + 1)
      if (spec.stop?.includes(c)) return undefined
      if (spec.code.includes(c)) {
        if (rest && spec.codeAttached) {
          take({ text: rest, dynamic: false, inner: [] })
          break
        }
        if (!usedNext) take(args[++i])
        usedNext = true
        continue
      }
      if (spec.value?.includes(c)) {
        if (spec.file?.includes(c)) file = true
        if (!rest && !usedNext) i++
        break
      }
      if (spec.attached?.includes(c)) break
      if (spec.digits?.includes(c)) while (/[0-7]/.test(t[j + 1] ?? '')) j++
    }
  }
  if (parts.length === 0 && spec.operand && !file && args[i]) parts.push(args[i]!)
  if (parts.length === 0) return undefined
  const hidden = parts.find(opaque)
  return { code: parts.map(asScript).join('\n'), ...(hidden ? { hidden } : {}) }
}

/** Literal code handed to `eval`/`exec` is read this deep; deeper, it counts as unreadable. */
const MAX_EVAL_DEPTH = 3

/** The shell commands code in `lang` runs, and the deletions it makes itself (as `rm -rf` commands). */
export function shellCalls(lang: Language, code: string, depth = 0): ShellCalls {
  if (lang === 'awk') return awkShellCalls(code)
  if (lang === 'sed') return sedShellCalls(code)
  const shell = shellCallsIn(lang, code)
  const deletes = deleteCalls(lang, code, (inner) =>
    depth < MAX_EVAL_DEPTH ? shellCalls(lang, inner, depth + 1) : { inner: [], dynamic: true },
  )
  return { inner: [...shell.inner, ...deletes.inner], dynamic: shell.dynamic || deletes.dynamic }
}

/** Whether an interpreter's program runs a shell command computed at run time. */
export function runsComputedShell(cmd: SimpleCommand): boolean {
  const lang = languageOf(cmd.name)
  return lang !== undefined && cmd.program !== undefined && shellCalls(lang, cmd.program).dynamic
}

/**
 * An interpreter handed code on its command line (`python3 -c`, `perl -e`,
 * `node -e`, an awk or sed program): it stays judged as itself, with its
 * program; the shell commands in the code are judged as scripts; code that
 * is wholly an expansion runs a program no one can read.
 */
export const interpreter =
  (lang: Language): Runner =>
  (words) => {
    const found = codeOf(lang, words.slice(1))
    if (!found) return { keep: true, inner: [] }
    return {
      keep: true,
      program: found.code,
      inner: [...(found.hidden ? [{ words: [found.hidden] }] : []), ...shellCalls(lang, found.code).inner],
    }
  }

const texts = (args: readonly Word[]) => args.filter((a) => !a.dynamic).map((a) => a.text)
/** A shell or interpreter that takes its program from stdin (no script operand, or `-s`/`-`). */
export function readsProgramFromStdin(cmd: SimpleCommand): boolean {
  if (!INTERPRETERS.has(cmd.name)) return false
  const a = texts(cmd.args)
  if (a.includes('-s') || a.includes('-')) return true
  if (a.some((x) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(x) || x === '-e' || x === '-E')) return false
  return cmd.args.every((w) => !w.dynamic && w.text.startsWith('-'))
}
