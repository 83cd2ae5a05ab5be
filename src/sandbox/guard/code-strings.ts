/** The string syntaxes the guard reads in interpreter code. */
export type Syntax = 'python' | 'perl' | 'ruby' | 'node' | 'php' | 'lua' | 'awk'

/**
 * A string literal found in code: its value (escapes resolved), whether it
 * interpolates (then its value is only known at run time), and its kind:
 * a plain string, a command string (backticks, `qx{}`, `%x()`), a word list
 * (`qw()`, `%w()`), or an awk regex.
 */
export interface Literal {
  value: string
  interp: boolean
  kind: 'str' | 'cmd' | 'list' | 'regex'
}

/** Code with every literal replaced by a slot `\u0001N\u0002` (comments dropped), so patterns never match inside strings. */
export interface Masked {
  text: string
  strings: Literal[]
}

const slot = (i: number): string => `\u0001${i}\u0002`
export const SLOT_SOURCE = '\u0001(\\d+)\u0002'

const PAIRS: Record<string, string> = { '(': ')', '[': ']', '{': '}', '<': '>' }

function unescape(body: string): string {
  return body.replace(
    /\\(x\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{1,2}|u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|[0-7]{1,3}|[\s\S])/g,
    (_, e: string) => {
      if (e.startsWith('x{') || e.startsWith('u{')) return String.fromCodePoint(parseInt(e.slice(2, -1), 16))
      if (/^[xu]/.test(e) && e.length > 1) return String.fromCodePoint(parseInt(e.slice(1), 16))
      if (/^[0-7]+$/.test(e)) return String.fromCharCode(parseInt(e, 8))
      return (
        ({ n: '\n', t: '\t', r: '\r', e: '\x1b', a: '\x07', f: '\f', v: '\v', b: '\b' } as Record<string, string>)[e] ??
        e
      )
    },
  )
}
const unescapeSingle = (body: string) => body.replace(/\\([\\'])/g, '$1')

/** Where a string or comment opens at `i`, by syntax: [how it is closed, how its body reads]. */
interface Opening {
  skip: number
  close: string
  open?: string
  kind: Literal['kind']
  raw: boolean
  single: boolean
  interp: RegExp | undefined
  comment?: boolean
  /** Perl's `s///` and `tr///` have two delimited parts. */
  parts?: number
}

const PERL_INTERP = /(?<!\\)[$@](?=[\w{:])/
const RUBY_INTERP = /#[{$@]/
const PHP_INTERP = /(?<!\\)\$(?=[A-Za-z_{])|\{\$/
/** A `/` opens a regex (not a division) after these, in perl, ruby, JS and awk. */
const REGEX_AFTER = '(,=~!{};&|?:[\n'
const REGEX_AFTER_WORD = /(?:^|[^\w$])(?:if|unless|and|or|not|when|return|split|grep|map|typeof)\s*$/
const regex = (skip: number, close: string, parts = 1): Opening => ({
  skip,
  close,
  kind: 'regex',
  raw: false,
  single: false,
  interp: undefined,
  ...(PAIRS[close] ? { open: close, close: PAIRS[close] } : {}),
  parts,
})

const quoted = (q: string, kind: Literal['kind'], interp: RegExp | undefined, single = q === "'"): Opening => ({
  skip: 1,
  close: q,
  kind,
  raw: false,
  single,
  interp,
})
const comment = (skip: number, close: string): Opening => ({
  skip,
  close,
  kind: 'str',
  raw: true,
  single: false,
  interp: undefined,
  comment: true,
})

/** A comment opening at `i`: `#`, `//`, `/*`, `--`, `--[[`. */
function commentOpening(code: string, i: number, syntax: Syntax): Opening | undefined {
  const c = code[i]!
  const rest = code.slice(i, i + 4)
  if (
    (syntax === 'python' || syntax === 'ruby' || syntax === 'awk' || syntax === 'php') &&
    c === '#' &&
    !(syntax === 'php' && code[i + 1] === '[')
  )
    return comment(1, '\n')
  if ((syntax === 'node' || syntax === 'php') && rest.startsWith('//')) return comment(2, '\n')
  if ((syntax === 'node' || syntax === 'php') && rest.startsWith('/*')) return comment(2, '*/')
  if (syntax === 'lua' && rest.startsWith('--')) {
    const long = /^--\[(=*)\[/.exec(code.slice(i))
    return long ? comment(long[0].length, `]${long[1]}]`) : comment(2, '\n')
  }
  return undefined
}

/** A regex opening at `i`: `/…/` after an operator, perl's `m//`, `s///`, `tr///`, ruby's `%r{}`. */
function regexOpening(code: string, i: number, syntax: Syntax, prev: string, wordBefore: boolean): Opening | undefined {
  const c = code[i]!
  if (
    c === '/' &&
    syntax !== 'python' &&
    syntax !== 'php' &&
    syntax !== 'lua' &&
    (prev === '' || REGEX_AFTER.includes(prev) || REGEX_AFTER_WORD.test(code.slice(Math.max(0, i - 12), i)))
  )
    return regex(1, '/')
  if (syntax === 'perl' && !wordBefore) {
    const q = /^(m|qr|s|tr|y)\s*([^\w\s}),;=>\]-])/.exec(code.slice(i, i + 5))
    if (q) return regex(q[0].length, q[2]!, q[1] === 's' || q[1] === 'tr' || q[1] === 'y' ? 2 : 1)
  }
  if (syntax === 'ruby' && code.slice(i, i + 2) === '%r' && /[^\w\s]/.test(code[i + 2] ?? ''))
    return regex(3, code[i + 2]!)
  return undefined
}

/** A string opening at `i` in one syntax; `wordBefore` when a name or `$` ends right before it. */
type StringOpening = (code: string, i: number, wordBefore: boolean) => Opening | undefined

function pythonString(code: string, i: number, wordBefore: boolean): Opening | undefined {
  const m = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(code.slice(i, i + 6))
  if (!m || (m[1] && wordBefore)) return undefined
  const p = m[1]!.toLowerCase()
  return {
    skip: m[0].length,
    close: m[2]!,
    kind: 'str',
    raw: p.includes('r'),
    single: false,
    interp: p.includes('f') ? /\{(?!\{)/ : undefined,
  }
}

function nodeString(code: string, i: number): Opening | undefined {
  const c = code[i]!
  if (c === "'" || c === '"') return quoted(c, 'str', undefined, false)
  if (c === '`') return quoted(c, 'str', /\$\{/)
  return undefined
}

function phpString(code: string, i: number): Opening | undefined {
  const c = code[i]!
  if (c === "'") return quoted(c, 'str', undefined)
  if (c === '"') return quoted(c, 'str', PHP_INTERP)
  if (c === '`') return quoted(c, 'cmd', PHP_INTERP)
  return undefined
}

function luaString(code: string, i: number): Opening | undefined {
  const c = code[i]!
  if (c === "'" || c === '"') return quoted(c, 'str', undefined, false)
  const long = /^\[(=*)\[/.exec(code.slice(i))
  return long
    ? { skip: long[0].length, close: `]${long[1]}]`, kind: 'str', raw: true, single: false, interp: undefined }
    : undefined
}

function awkString(code: string, i: number): Opening | undefined {
  return code[i] === '"' ? quoted('"', 'str', undefined, false) : undefined
}

/** Perl's and ruby's strings: quotes, backticks, and the quote operators (`qq{}`, `qw()`, `%w[]`, `%x()`…). */
function perlRubyString(syntax: 'perl' | 'ruby'): StringOpening {
  return (code, i, wordBefore) => {
    const c = code[i]!
    const interp = syntax === 'perl' ? PERL_INTERP : RUBY_INTERP
    if (c === "'" && !(syntax === 'perl' && code[i - 1] === '$')) return quoted(c, 'str', undefined)
    if (c === '"') return quoted(c, 'str', interp)
    if (c === '`') return quoted(c, 'cmd', interp)
    const op =
      syntax === 'perl'
        ? /^(qq|qw|qx|q)\s*([^\w\s])/.exec(code.slice(i, i + 5))
        : /^%([qQwWxiI]?)([^\w\s=])/.exec(code.slice(i, i + 4))
    if (!op || wordBefore || (syntax === 'ruby' && !op[1] && !'([{<'.includes(op[2]!))) return undefined
    const kind: Literal['kind'] = /^(qx|x)$/.test(op[1]!) ? 'cmd' : /^(qw|w|W|i|I)$/.test(op[1]!) ? 'list' : 'str'
    const d = op[2]!
    const plain = op[1] === 'q' || op[1] === 'qw' || op[1] === 'w' || op[1] === 'i'
    return {
      skip: op[0].length,
      close: PAIRS[d] ?? d,
      ...(PAIRS[d] ? { open: d } : {}),
      kind,
      raw: false,
      single: plain,
      interp: plain ? undefined : interp,
    }
  }
}

const STRINGS: Record<Syntax, StringOpening> = {
  python: pythonString,
  node: nodeString,
  php: phpString,
  lua: luaString,
  awk: awkString,
  perl: perlRubyString('perl'),
  ruby: perlRubyString('ruby'),
}

/** Where a string or comment opens at `i`, if one does: comments first, then regexes, then the syntax's strings. */
function opening(code: string, i: number, syntax: Syntax, prev: string): Opening | undefined {
  const wordBefore = /[\w$]/.test(code[i - 1] ?? '')
  return (
    commentOpening(code, i, syntax) ??
    regexOpening(code, i, syntax, prev, wordBefore) ??
    STRINGS[syntax](code, i, wordBefore)
  )
}

/** Masks the literals and comments of `code`, written in `syntax`. */
export function mask(code: string, syntax: Syntax): Masked {
  const strings: Literal[] = []
  let text = ''
  let prev = ''
  let i = 0
  while (i < code.length) {
    const o = opening(code, i, syntax, prev)
    if (!o) {
      const c = code[i]!
      text += c
      if (!/\s/.test(c) || c === '\n') prev = c
      i++
      continue
    }
    let j = i + o.skip
    let depth = 0
    let body = ''
    let parts = o.parts ?? 1
    let open = o.open
    let close = o.close
    for (; j < code.length; j++) {
      const c = code[j]!
      if (c === '\\' && !o.raw && !o.comment) {
        body += c + (code[j + 1] ?? '')
        j++
        continue
      }
      if (open && c === open) depth++
      else if (code.startsWith(close, j)) {
        if (depth > 0) depth--
        else if (--parts === 0) break
        else if (open) {
          // `s{a}{b}`: the second part has its own brackets.
          while (/\s/.test(code[j + 1] ?? '')) j++
          const next = code[j + 1] ?? ''
          if (PAIRS[next]) {
            open = next
            close = PAIRS[next]!
            j++
          }
          continue
        }
      }
      body += c
    }
    i = Math.min(code.length, j + close.length)
    if (o.comment) {
      text += o.close === '\n' ? '\n' : ' '
      continue
    }
    const value = o.raw ? body : o.single ? unescapeSingle(body) : unescape(body)
    strings.push({ value, interp: o.interp?.test(body) ?? false, kind: o.kind })
    text += slot(strings.length - 1)
    prev = 'x'
  }
  return { text, strings }
}
