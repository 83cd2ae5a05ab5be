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
  return new SedReader(script).read()
}

/** A cursor over a sed script, one step of its grammar per method. */
class SedReader {
  private readonly out: ShellCalls = { inner: [], dynamic: false }
  private i = 0

  constructor(private readonly s: string) {}

  read(): ShellCalls {
    const s = this.s
    while (this.i < s.length) {
      while (/[\s;{}]/.test(s[this.i] ?? '')) this.i++
      if (this.i >= s.length) break
      this.addresses()
      this.spaces()
      while (s[this.i] === '!') {
        this.i++
        this.spaces()
      }
      this.command(s[this.i++])
    }
    return this.out
  }

  /** `1`, `1,5`, `/re/,+3`, `$`: the lines a command applies to. */
  private addresses(): void {
    const s = this.s
    if (!this.address()) return
    this.spaces()
    if (s[this.i] !== ',') return
    this.i++
    this.spaces()
    if (s[this.i] === '+' || s[this.i] === '~') {
      this.i++
      this.digits()
    } else this.address()
  }

  private address(): boolean {
    const s = this.s
    const c = s[this.i]
    if (c === undefined) return false
    if (/\d/.test(c)) {
      this.digits()
      if (s[this.i] === '~') {
        this.i++
        this.digits()
      }
    } else if (c === '$') this.i++
    else if (c === '/' || c === '\\') {
      const d = c === '/' ? '/' : (s[this.i + 1] ?? '/')
      this.i += c === '/' ? 1 : 2
      this.delimited(d)
      while (s[this.i] === 'I' || s[this.i] === 'M') this.i++
    } else return false
    return true
  }

  private command(c: string | undefined): void {
    switch (c) {
      case 's':
        return this.substitute()
      case 'y': {
        const d = this.s[this.i++] ?? '/'
        this.delimited(d)
        this.delimited(d)
        return
      }
      case 'e':
        return this.execute()
      case 'a':
      case 'i':
      case 'c':
      case 'r':
      case 'R':
      case 'w':
      case 'W':
      case '#':
        this.toEol()
        return
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        this.until(';\n}')
        return
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
        this.spaces()
        this.digits()
        return
    }
  }

  /** `s/a/b/FLAGS`: the `e` flag runs the pattern space. */
  private substitute(): void {
    const s = this.s
    const d = s[this.i++] ?? '/'
    this.delimited(d)
    this.delimited(d)
    let flags = ''
    while (/[gpiImMe\d]/.test(s[this.i] ?? '')) flags += s[this.i++]
    if (flags.includes('e')) this.out.dynamic = true
    if (s[this.i] === 'w') this.toEol()
  }

  /** `e COMMAND` runs COMMAND; a bare `e` runs the pattern space. */
  private execute(): void {
    this.spaces()
    const cmd = this.toEol().trim()
    if (cmd === '') this.out.dynamic = true
    else this.out.inner.push({ script: cmd })
  }

  private digits(): void {
    while (/\d/.test(this.s[this.i] ?? '')) this.i++
  }

  private spaces(): void {
    while (this.s[this.i] === ' ' || this.s[this.i] === '\t') this.i++
  }

  private toEol(): string {
    const s = this.s
    let line = ''
    while (this.i < s.length && s[this.i] !== '\n') {
      // `a\` text continues on the next line.
      if (s[this.i] === '\\' && s[this.i + 1] === '\n') {
        line += '\n'
        this.i += 2
        continue
      }
      line += s[this.i++]
    }
    return line
  }

  private until(stops: string): void {
    while (this.i < this.s.length && !stops.includes(this.s[this.i]!)) this.i++
  }

  private delimited(d: string): void {
    while (this.i < this.s.length && this.s[this.i] !== d) this.i += this.s[this.i] === '\\' ? 2 : 1
    this.i++
  }
}
