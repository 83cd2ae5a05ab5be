import type { ShellCalls } from './shell-calls.js'
import { mask, SLOT_SOURCE, type Literal } from './code-strings.js'
import { basename, INTERPRETERS } from './shell-words.js'

const CONCAT = new RegExp(`^\\(*\\s*${SLOT_SOURCE}(?:\\s*${SLOT_SOURCE})*\\s*\\)*$`)
const SLOTS = new RegExp(SLOT_SOURCE, 'g')

/** An awk expression's value when it is made of plain string literals only (`"a" "b"`), else undefined. */
function literalValue(expr: string, strings: readonly Literal[]): string | undefined {
  const e = expr.trim()
  if (!CONCAT.test(e)) return undefined
  const parts = [...e.matchAll(SLOTS)].map((m) => strings[Number(m[1])]!)
  return parts.every((p) => p.kind === 'str') ? parts.map((p) => p.value).join('') : undefined
}

/** A command that takes its program from stdin: what is printed into it is the program. */
function readsProgram(cmd: string): boolean {
  const [head, ...rest] = cmd.trim().split(/\s+/)
  return INTERPRETERS.has(basename(head ?? '')) && rest.every((w) => /^-[a-bd-zA-Z]*$/.test(w))
}

/** The expression ending at `end`, back to an unbalanced `(` or a statement boundary. */
function before(text: string, end: number): string {
  let depth = 0
  let i = end - 1
  for (; i >= 0; i--) {
    const c = text[i]!
    if (c === ')') depth++
    else if (c === '(') {
      if (depth === 0) break
      depth--
    } else if (depth === 0 && ';{}\n='.includes(c)) break
  }
  return text.slice(i + 1, end)
}

/** The expression starting at `start`, up to an unbalanced `)` or a statement boundary. */
function after(text: string, start: number): string {
  let depth = 0
  let i = start
  for (; i < text.length; i++) {
    const c = text[i]!
    if (c === '(') depth++
    else if (c === ')') {
      if (depth === 0) break
      depth--
    } else if (depth === 0 && ';{}\n'.includes(c)) break
  }
  return text.slice(start, i)
}

/** The shell commands an awk program runs: `system(…)`, `print … | "cmd"`, `"cmd" | getline`. */
export function awkShellCalls(program: string): ShellCalls {
  const { text, strings } = mask(program, 'awk')
  const out: ShellCalls = { inner: [], dynamic: false }
  const run = (expr: string, printedInto: boolean) => {
    const value = literalValue(expr, strings)
    if (value === undefined || (printedInto && readsProgram(value))) out.dynamic = true
    else out.inner.push({ script: value })
  }
  for (const m of text.matchAll(/\bsystem\s*\(/g)) run(after(text, m.index + m[0].length), false)
  for (const m of text.matchAll(/\|&?/g)) {
    const i = m.index
    if (text[i - 1] === '|' || text[i + 1] === '|') continue
    const rest = text.slice(i + m[0].length)
    if (/^\s*getline\b/.test(rest)) run(before(text, i), false)
    else run(after(text, i + m[0].length), true)
  }
  return out
}

/**
 * The shell commands a sed script runs (GNU): `e COMMAND` runs COMMAND;
 * a bare `e` and the `s///e` flag run text made from the input, which
 * cannot be known. Reads sed's grammar just far enough to find them.
 */
export function sedShellCalls(script: string): ShellCalls {
  const out: ShellCalls = { inner: [], dynamic: false }
  const s = script
  let i = 0
  const digits = () => {
    while (/\d/.test(s[i] ?? '')) i++
  }
  const spaces = () => {
    while (s[i] === ' ' || s[i] === '\t') i++
  }
  const toEol = (): string => {
    let line = ''
    while (i < s.length && s[i] !== '\n') {
      // `a\` text continues on the next line.
      if (s[i] === '\\' && s[i + 1] === '\n') {
        line += '\n'
        i += 2
        continue
      }
      line += s[i++]
    }
    return line
  }
  const until = (stops: string) => {
    while (i < s.length && !stops.includes(s[i]!)) i++
  }
  const delimited = (d: string) => {
    while (i < s.length && s[i] !== d) i += s[i] === '\\' ? 2 : 1
    i++
  }
  const address = (): boolean => {
    const c = s[i]
    if (c === undefined) return false
    if (/\d/.test(c)) {
      digits()
      if (s[i] === '~') {
        i++
        digits()
      }
    } else if (c === '$') i++
    else if (c === '/' || c === '\\') {
      const d = c === '/' ? '/' : (s[i + 1] ?? '/')
      i += c === '/' ? 1 : 2
      delimited(d)
      while (s[i] === 'I' || s[i] === 'M') i++
    } else return false
    return true
  }
  while (i < s.length) {
    while (/[\s;{}]/.test(s[i] ?? '')) i++
    if (i >= s.length) break
    if (address()) {
      spaces()
      if (s[i] === ',') {
        i++
        spaces()
        if (s[i] === '+' || s[i] === '~') {
          i++
          digits()
        } else address()
      }
    }
    spaces()
    while (s[i] === '!') {
      i++
      spaces()
    }
    const c = s[i++]
    switch (c) {
      case 's': {
        const d = s[i++] ?? '/'
        delimited(d)
        delimited(d)
        let flags = ''
        while (/[gpiImMe\d]/.test(s[i] ?? '')) flags += s[i++]
        if (flags.includes('e')) out.dynamic = true
        if (s[i] === 'w') toEol()
        break
      }
      case 'y': {
        const d = s[i++] ?? '/'
        delimited(d)
        delimited(d)
        break
      }
      case 'e': {
        spaces()
        const cmd = toEol().trim()
        if (cmd === '') out.dynamic = true
        else out.inner.push({ script: cmd })
        break
      }
      case 'a':
      case 'i':
      case 'c':
      case 'r':
      case 'R':
      case 'w':
      case 'W':
      case '#':
        toEol()
        break
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        until(';\n}')
        break
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
        spaces()
        digits()
        break
    }
  }
  return out
}
