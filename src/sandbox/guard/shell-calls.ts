import { mask, SLOT_SOURCE, type Literal, type Syntax } from './code-strings.js'
import { literal, type Inner, type Word } from './shell-words.js'

/**
 * What interpreter code runs in a shell: the literal commands (scripts to
 * judge, or argument vectors), and whether any command is computed at run
 * time (`os.system("rm " + p)`, `system($cmd)`) and so cannot be judged.
 */
export interface ShellCalls {
  inner: Inner[]
  dynamic: boolean
}

/**
 * How a call takes its command: `shell` a shell string (`os.system`),
 * `list` a shell string alone or an argument vector (`system LIST`,
 * `subprocess.run`), `spawn` a program then a list of arguments
 * (`spawn(cmd, [args])`), `pyexec` Python's `os.exec*`/`os.spawn*`, `open`
 * Perl's piped open.
 */
type CallKind = 'shell' | 'list' | 'spawn' | 'pyexec' | 'open'
interface Pattern {
  re: RegExp
  kind: CallKind
}

const SUBPROCESS = 'run|call|check_call|check_output|Popen'
function pythonPatterns(code: string): Pattern[] {
  const aliases = ['subprocess', ...[...code.matchAll(/\bimport\s+subprocess\s+as\s+(\w+)/g)].map((m) => m[1]!)]
  const imported = /\bfrom\s+subprocess\s+import\b/.test(code)
  return [
    { re: /\b(?:system|popen\d?|getoutput|getstatusoutput|create_subprocess_shell)\s*(?=\()/g, kind: 'shell' },
    { re: new RegExp(`\\b(?:${aliases.join('|')})\\s*\\.\\s*(?:${SUBPROCESS})\\s*(?=\\()`, 'g'), kind: 'list' },
    ...(imported ? [{ re: new RegExp(`(?<![\\w.])(?:${SUBPROCESS})\\s*(?=\\()`, 'g'), kind: 'list' as const }] : []),
    { re: /\b(?:create_subprocess_exec|pty\s*\.\s*spawn)\s*(?=\()/g, kind: 'list' },
    { re: /\bos\s*\.\s*(?:(?:exec|spawn)[lv]p?e?|posix_spawnp?)\s*(?=\()/g, kind: 'pyexec' },
  ]
}

interface Lang {
  syntax: Syntax
  patterns: (code: string) => Pattern[]
  /** Calls may go without parentheses (`system "ls"`). */
  bare?: boolean
  /** Only code that mentions this can run commands (node needs `child_process`). */
  gate?: RegExp
}

const LANGS: Record<string, Lang> = {
  python: { syntax: 'python', patterns: pythonPatterns },
  perl: {
    syntax: 'perl',
    bare: true,
    patterns: () => [
      { re: /(?<![\w$@%&>:])(?:system|exec)\b/g, kind: 'list' },
      { re: /(?<![\w$@%&>:])readpipe\b/g, kind: 'shell' },
      { re: /(?<![\w$@%&>:])open\b/g, kind: 'open' },
    ],
  },
  ruby: {
    syntax: 'ruby',
    bare: true,
    patterns: () => [
      { re: /(?:(?<![\w.:@$])|\b(?:Kernel|Process)\s*\.\s*)(?:system|exec|spawn)\b/g, kind: 'list' },
      { re: /\b(?:IO\s*\.\s*popen|Open3\s*\.\s*(?:capture2e?|capture3|popen2e?|popen3|pipeline\w*))\b/g, kind: 'list' },
    ],
  },
  node: {
    syntax: 'node',
    gate: /child_process/,
    patterns: () => [
      { re: /\b(?:execSync|exec)\s*(?=\()/g, kind: 'shell' },
      { re: /\b(?:spawnSync|spawn|execFileSync|execFile)\s*(?=\()/g, kind: 'spawn' },
    ],
  },
  php: {
    syntax: 'php',
    patterns: () => [
      { re: /(?<![\w$>:])(?:system|exec|shell_exec|passthru|popen|proc_open)\s*(?=\()/g, kind: 'shell' },
      { re: /\bpcntl_exec\s*(?=\()/g, kind: 'spawn' },
    ],
  },
  lua: {
    syntax: 'lua',
    bare: true,
    patterns: () => [{ re: /\b(?:os\s*\.\s*execute|io\s*\.\s*popen)\b/g, kind: 'shell' }],
  },
}

const OPEN = new Set(['(', '[', '{'])
const CLOSE = new Set([')', ']', '}'])

/** Splits `a, (b, c), d` at top-level commas. */
function splitTop(s: string): string[] {
  const out: string[] = []
  let depth = 0
  let cur = ''
  for (const c of s) {
    if (OPEN.has(c)) depth++
    if (CLOSE.has(c)) depth--
    if (c === ',' && depth === 0) {
      out.push(cur)
      cur = ''
    } else cur += c
  }
  if (cur.trim()) out.push(cur)
  return out.map((a) => a.trim()).filter((a) => a !== '')
}

/** The argument text of the call whose name ends at `at`: in parentheses, or (bare calls) up to the end of the statement. */
export function argsAt(code: string, at: number, bare: boolean): string[] | undefined {
  let i = at
  while (code[i] === ' ' || code[i] === '\t') i++
  const paren = code[i] === '('
  if (!paren && (!bare || !/[\u0001\w$@%[:'"-]/.test(code[i] ?? ''))) return undefined
  let depth = 0
  let j = paren ? i + 1 : i
  for (; j < code.length; j++) {
    const c = code[j]!
    if (OPEN.has(c)) depth++
    else if (CLOSE.has(c)) {
      if (depth === 0) break
      depth--
    } else if (
      !paren &&
      depth === 0 &&
      (c === ';' ||
        c === '\n' ||
        /^\s(?:or|and|if|unless|while|until|do|then)\b|^(?:\|\||&&)/.test(code.slice(j, j + 8)))
    )
      break
  }
  return splitTop(code.slice(paren ? i + 1 : i, j))
}

export type Value = { t: 'str'; v: string } | { t: 'list'; v: Word[] } | { t: 'opt'; shell: boolean } | { t: 'dyn' }

const CONCAT = new RegExp(`^${SLOT_SOURCE}(?:\\s*(?:\\+|\\.\\.?)?\\s*${SLOT_SOURCE})*$`)
const SLOTS = new RegExp(SLOT_SOURCE, 'g')

export function classify(arg: string, strings: readonly Literal[]): Value {
  if (/^\w+\s*=(?!=)/.test(arg) || /^\w+:\s/.test(arg) || arg.startsWith('{'))
    return { t: 'opt', shell: /\bshell\s*[:=]\s*(?:True|true)\b/.test(arg) }
  if (CONCAT.test(arg)) {
    const parts = [...arg.matchAll(SLOTS)].map((m) => strings[Number(m[1])]!)
    if (parts.length === 1 && parts[0]!.kind === 'list')
      return { t: 'list', v: parts[0]!.value.split(/\s+/).filter(Boolean).map(literal) }
    if (parts.some((p) => p.interp || p.kind !== 'str')) return { t: 'dyn' }
    return { t: 'str', v: parts.map((p) => p.value).join('') }
  }
  const list = /^(?:array\s*)?[[(]([\s\S]*)[\])]$/.exec(arg)
  if (list)
    return {
      t: 'list',
      v: splitTop(list[1]!)
        .map((a) => classify(a, strings))
        .map((v, i) => (v.t === 'str' ? literal(v.v) : { text: `$__expr${i}`, dynamic: true, inner: [] })),
    }
  return { t: 'dyn' }
}

const argv = (words: Word[]): Inner => ({ words })
/** The first word of an argument vector must be literal: it is the program. */
const program = (words: Word[]): Inner | 'dynamic' => (words[0] && !words[0].dynamic ? argv(words) : 'dynamic')

/** What one call runs, from its arguments. */
function judge(kind: CallKind, name: string, args: Value[]): Inner | 'dynamic' | undefined {
  const shell = args.some((a) => a.t === 'opt' && a.shell)
  const pos = args.filter((a) => a.t !== 'opt')
  const [first, second] = pos
  if (!first) return undefined
  const words = (v: Value): Word[] =>
    v.t === 'str' ? [literal(v.v)] : v.t === 'list' ? v.v : [{ text: '$__args', dynamic: true, inner: [] }]
  switch (kind) {
    case 'shell':
      return first.t === 'str' ? { script: first.v } : first.t === 'list' ? program(first.v) : 'dynamic'
    case 'list':
      if (first.t === 'list')
        return shell ? (first.v[0] && !first.v[0].dynamic ? { script: first.v[0].text } : 'dynamic') : program(first.v)
      if (first.t !== 'str') return 'dynamic'
      if (pos.length === 1) return { script: first.v }
      return program(pos.flatMap(words))
    case 'spawn': {
      if (first.t !== 'str') return 'dynamic'
      const all = [literal(first.v), ...(second ? words(second) : [])]
      return shell
        ? all.every((w) => !w.dynamic)
          ? { script: all.map((w) => w.text).join(' ') }
          : 'dynamic'
        : argv(all)
    }
    case 'pyexec': {
      // os.execl(path, arg0, …), os.execv(path, [arg0, …]), os.spawnv(mode, path, …), os.posix_spawn(path, argv, env); `…e` variants end with env.
      const fn = name.replace(/^os\s*\.\s*/, '')
      const posix = fn.startsWith('posix_spawn')
      let p = fn.startsWith('spawn') ? pos.slice(1) : pos
      if (posix || fn.endsWith('e')) p = p.slice(0, -1)
      if (p[0]?.t !== 'str') return 'dynamic'
      const vector = posix || fn.includes('v')
      const rest = vector ? (p[1]?.t === 'list' ? p[1].v.slice(1) : p[1] ? words(p[1]) : []) : p.slice(2).flatMap(words)
      return argv([literal(p[0].v), ...rest])
    }
    case 'open': {
      if (pos.length === 2 && second?.t === 'str') {
        const m = /^\s*\|([\s\S]*)$|^([\s\S]*)\|\s*$/.exec(second.v)
        return m ? { script: (m[1] ?? m[2])!.trim() } : undefined
      }
      if (pos.length < 3 || second?.t !== 'str' || !['-|', '|-'].includes(second.v.trim())) return undefined
      return judge('list', 'open', pos.slice(2))
    }
  }
}

/** Finds the shell commands that code in `language` runs. */
export function shellCallsIn(language: string, code: string): ShellCalls {
  const lang = LANGS[language]
  const out: ShellCalls = { inner: [], dynamic: false }
  if (!lang || (lang.gate && !lang.gate.test(code))) return out
  const { text, strings } = mask(code, lang.syntax)
  const add = (r: Inner | 'dynamic' | undefined) => {
    if (r === 'dynamic') out.dynamic = true
    else if (r) out.inner.push(r)
  }
  // Backticks, qx{}, %x(): command strings wherever they stand.
  for (const s of strings) if (s.kind === 'cmd') add(s.interp ? 'dynamic' : { script: s.value })
  for (const p of lang.patterns(code)) {
    for (const m of text.matchAll(p.re)) {
      const args = argsAt(text, m.index + m[0].length, lang.bare ?? false)
      if (args && args.length > 0)
        add(
          judge(
            p.kind,
            m[0].trim(),
            args.map((a) => classify(a, strings)),
          ),
        )
    }
  }
  return out
}
