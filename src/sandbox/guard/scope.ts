import type { Node } from 'web-tree-sitter'
import { braceExpand, normalize, valuesOf } from './paths.js'
import { basename, unquote, type Word } from './shell-words.js'

/** Past this many values a word is unknown. */
const MAX_VALUES = 256
/** Quoted braces and commas, and the spaces an unquoted expansion splits at, stand in as these while a word is built. */
const QUOTED: Record<string, string> = { '{': '\u0003', '}': '\u0004', ',': '\u0005' }
const SPLIT = '\u0006'
const protect = (s: string) => s.replace(/[{},]/g, (c) => QUOTED[c]!)
const restore = (s: string) =>
  s
    .replace(/\u0003/g, '{')
    .replace(/\u0004/g, '}')
    .replace(/\u0005/g, ',')
/** Parameters whose value is a number or a flag string: never a path. */
const NUMERIC = new Set([
  '$',
  '!',
  '?',
  '#',
  '-',
  'RANDOM',
  'SRANDOM',
  'BASHPID',
  'LINENO',
  'SECONDS',
  'PPID',
  'UID',
  'EUID',
  'SHLVL',
  'COLUMNS',
  'LINES',
])
/** Commands that read into the variables they name. */
const READERS = new Set(['read', 'mapfile', 'readarray', 'getopts', 'select'])

/** `${v#pat}`, `${v##pat}`, `${v%pat}`, `${v%%pat}`: the shortest or longest matching prefix or suffix removed. */
function trim(value: string, op: string, pattern: string): string {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|\\]/g, '\\$&')
      .replace(/\*/g, '[\\s\\S]*')
      .replace(/\?/g, '[\\s\\S]')}$`,
  )
  const n = value.length
  const cuts = [...Array(n + 1).keys()]
  const order = op.length === 2 ? cuts.reverse() : cuts
  for (const i of order) {
    if (op[0] === '#' && re.test(value.slice(0, i))) return value.slice(i)
    if (op[0] === '%' && re.test(value.slice(n - i))) return value.slice(0, n - i)
  }
  return value
}
const basenameOf = (v: string) => v.replace(/\/+$/, '').split('/').at(-1) || (v.startsWith('/') ? '/' : '.')
const dirnameOf = (v: string) => {
  const t = v.replace(/\/+$/, '')
  const i = t.lastIndexOf('/')
  return i === -1 ? '.' : i === 0 ? '/' : t.slice(0, i)
}

const product = (a: string[], b: string[]): string[] | undefined =>
  a.length * b.length > MAX_VALUES ? undefined : a.flatMap((x) => b.map((y) => x + y))

/**
 * What a script has set so far, as the guard walks it in order: variables
 * (each with every value it was given: the union over branches and loop
 * rounds, null when one is unknown) and the working directory (`cd`). A
 * variable the script never set comes from the environment: unknown.
 */
export class Scope {
  private vars = new Map<string, string[] | null>()

  constructor(
    public wd: string | null,
    private positional: readonly Word[] | undefined,
    private inFunction: () => boolean,
  ) {}

  save(): { vars: Map<string, string[] | null>; wd: string | null } {
    return { vars: new Map(this.vars), wd: this.wd }
  }
  restore(s: { vars: Map<string, string[] | null>; wd: string | null }): void {
    this.vars = s.vars
    this.wd = s.wd
  }

  /** Adds values a variable may hold from here on (null: unknown); earlier values stay possible. */
  assign(name: string, values: readonly string[] | null | undefined): void {
    const had = this.vars.get(name)
    if (had === null) return
    if (!values) return void this.vars.set(name, null)
    const all = [...new Set([...(had ?? []), ...values])]
    this.vars.set(name, all.length > MAX_VALUES ? null : all)
  }

  /** Every value a word node may take, after brace expansion and splitting, or undefined when unknown. */
  values(node: Node): string[] | undefined {
    const raw = this.alts(node, false)
    if (!raw) return undefined
    const out = [
      ...new Set(
        raw.flatMap((v) =>
          braceExpand(v)
            .flatMap((x) => x.split(SPLIT))
            .map(restore),
        ),
      ),
    ]
    return out.length > MAX_VALUES ? undefined : out
  }

  /** A `variable_assignment`, a `for` loop, `read x`, `unset x`, `cd`: what the statement sets. */
  track(node: Node, words?: readonly Word[]): void {
    if (node.type === 'variable_assignment') {
      const name = (node.childForFieldName('name')?.text ?? '').replace(/\[.*$/, '')
      const value = node.childForFieldName('value')
      if (/^\s*\w+(\[[^\]]*\])?\+=/.test(node.text)) return this.assign(name, null)
      if (!value) return this.assign(name, [''])
      if (value.type === 'array') {
        const all = value.namedChildren.map((c) => (c ? this.values(c) : undefined))
        return this.assign(name, all.some((v) => !v) ? null : (all.flat() as string[]))
      }
      return this.assign(name, this.alts(value, true)?.map(restore) ?? null)
    }
    if (node.type === 'for_statement') {
      const name = node.childForFieldName('variable')?.text ?? ''
      const items = node.childrenForFieldName('value').filter((c): c is Node => c !== null)
      const all = items.map((c) => this.values(c))
      return this.assign(name, items.length === 0 || all.some((v) => !v) ? null : (all.flat() as string[]))
    }
    if (node.type === 'unset_command')
      for (const c of node.namedChildren) if (c?.type === 'variable_name') this.assign(c.text, [''])
    if (node.type === 'command' && words?.[0] && !words[0].dynamic)
      this.command(basename(words[0].text), words.slice(1))
  }

  /** Assignments and `cd` inside a loop body come back round to its top: the guard takes them in before walking it. */
  preScan(body: Node): void {
    for (const a of body.descendantsOfType('variable_assignment')) if (a) this.track(a)
    for (const c of body.descendantsOfType('command')) {
      const name = c?.childForFieldName('name')?.text
      if (c && name && (READERS.has(name) || name === 'printf'))
        this.readers(
          name,
          c.namedChildren.slice(1).map((n) => n?.text ?? ''),
        )
      if (name === 'cd' || name === 'pushd' || name === 'popd') this.wd = null
    }
  }

  private readers(name: string, args: readonly string[]): void {
    if (READERS.has(name)) for (const a of args) if (/^[A-Za-z_]\w*$/.test(a)) this.assign(a, null)
    const v = args.indexOf('-v')
    if (name === 'printf' && v !== -1 && args[v + 1]) this.assign(args[v + 1]!.replace(/\[.*$/, ''), null)
  }

  private command(name: string, args: readonly Word[]): void {
    this.readers(
      name,
      args.map((a) => (a.dynamic ? '' : a.text)),
    )
    if (name !== 'cd' && name !== 'pushd' && name !== 'popd') return
    const ops = args.filter((a) => a.dynamic || !/^(-[LPe@]+|--)$/.test(a.text))
    if (name === 'popd' || ops[0]?.text === '-') return void (this.wd = null)
    if (ops.length === 0) return void (this.wd = '~')
    const v = valuesOf(ops[0]!)
    if (!v || v.length !== 1 || this.wd === null) return void (this.wd = null)
    const to = v[0]!
    const joined = to.startsWith('/') || to.startsWith('~') || this.wd === '.' ? to : `${this.wd}/${to}`
    const n = normalize(joined)
    this.wd = joined.startsWith('~')
      ? '~'
      : n.absolute
        ? `/${n.parts.join('/')}`
        : n.escapes
          ? joined
          : n.parts.join('/') || '.'
  }

  private lookup(name: string): string[] | undefined {
    if (NUMERIC.has(name)) return ['0']
    if (/^(\d+|[@*])$/.test(name)) {
      if (!this.positional || this.inFunction()) return undefined
      const picked = name === '@' || name === '*' ? this.positional.slice(1) : [this.positional[Number(name)]]
      if (picked.some((w) => w === undefined)) return ['']
      const vals = picked.map((w) => valuesOf(w!))
      return vals.some((v) => !v) ? undefined : (vals.flat() as string[])
    }
    if (this.vars.has(name)) return this.vars.get(name) ?? undefined
    if (name === 'HOME') return ['~']
    if (name === 'PWD') return this.wd === null ? undefined : [this.wd]
    if (name === 'TMPDIR') return ['/tmp']
    return undefined
  }

  /** A variable's value as an expansion yields it: quoted it is one word, unquoted it splits. */
  private expansion(name: string, quoted: boolean, v = this.lookup(name)): string[] | undefined {
    return v && (quoted ? v.map(protect) : v.map((x) => protect(x).trim().replace(/\s+/g, SPLIT)))
  }

  /** `${X}`, `${X:-default}`, `${X:+alt}`, `${#X}`; other operators give an unknown value. */
  private braced(node: Node, quoted: boolean): string[] | undefined {
    const m = /^\$\{(#|!)?([A-Za-z_]\w*|\d+|[@*#?$!-])(\[[^\]]*\])?(:?[-=+?])?/.exec(node.text)
    if (!m) return undefined
    if (m[1] === '#') return ['0']
    if (m[1] === '!') return undefined
    const rest = node.text.slice(m[0].length)
    const cut = !m[4] && !m[3] ? /^(##?|%%?)([^$`]*)\}$/.exec(rest) : null
    const known = this.lookup(m[2]!)
    // Trimming costs the square of the length: a long value is left unknown.
    if (cut)
      return known?.every((v) => v.length <= 1024)
        ? this.expansion(
            m[2]!,
            quoted,
            known.map((v) => trim(v, cut[1]!, unquote(cut[2]!))),
          )
        : undefined
    if (!m[4] && rest !== '}') return undefined
    const own = this.expansion(m[2]!, quoted)
    if (!m[4] || m[4].endsWith('?')) return own
    const parts = node.namedChildren.filter(
      (c): c is Node =>
        c !== null && c.type !== 'variable_name' && c.type !== 'subscript' && c.type !== 'special_variable_name',
    )
    let alt: string[] | undefined = ['']
    for (const p of parts) alt = alt && product(alt, this.alts(p, quoted) ?? [])
    if (parts.some((p) => !this.alts(p, quoted))) alt = undefined
    if (m[4].endsWith('+')) return alt && ['', ...alt]
    return own && alt && [...own, ...alt]
  }

  /** The alternatives a node's text may take, quoting kept as markers; undefined when unknown. */
  private alts(node: Node, quoted: boolean): string[] | undefined {
    switch (node.type) {
      case 'word':
      case 'number':
      case 'brace_expression':
        return [quoted ? protect(unquote(node.text)) : unquote(node.text)]
      case 'raw_string':
      case 'ansi_c_string':
        return [protect(unquote(node.text))]
      case 'simple_expansion':
        return this.expansion(node.text.slice(1), quoted)
      case 'expansion':
        return this.braced(node, quoted)
      case 'arithmetic_expansion':
        return ['0']
      case 'process_substitution':
        return ['/dev/fd/63']
      case 'command_substitution': {
        const cmd = node.namedChildren[0]
        const name = cmd?.type === 'command' ? cmd.childForFieldName('name')?.text : undefined
        if (name === 'pwd' && this.wd !== null) return [this.wd]
        if (name === 'mktemp') return ['/tmp/mktemp']
        // `$(basename "$f")`, `$(dirname "$f")`: what they print of a known value.
        const arg = name === 'basename' || name === 'dirname' ? cmd?.childrenForFieldName('argument')[0] : undefined
        const values = arg ? this.values(arg) : undefined
        return values?.map((v) => protect(name === 'basename' ? basenameOf(v) : dirnameOf(v)))
      }
      case 'string':
      case 'translated_string':
      case 'concatenation': {
        const inString = quoted || node.type !== 'concatenation'
        let out: string[] | undefined = ['']
        let at = node.startIndex + (inString && node.type !== 'concatenation' ? (node.type === 'string' ? 1 : 2) : 0)
        const end = node.endIndex - (node.type === 'concatenation' ? 0 : 1)
        const gap = (to: number) => {
          const text = node.text.slice(at - node.startIndex, to - node.startIndex)
          if (text && out) out = product(out, [inString ? protect(unquote(`"${text}"`)) : unquote(text)])
        }
        for (const c of node.namedChildren) {
          if (!c || !out) continue
          gap(c.startIndex)
          const a: string[] | undefined =
            c.type === 'string_content' ? [protect(unquote(`"${c.text}"`))] : this.alts(c, inString)
          out = a && product(out, a)
          at = c.endIndex
        }
        if (out) gap(end)
        return out
      }
      default:
        return undefined
    }
  }
}
