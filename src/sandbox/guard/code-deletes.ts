import { argsAt, classify, type ShellCalls, type Value } from './shell-calls.js'
import { DELETE_SPECS, type Deleter } from './code-delete-specs.js'
import { mask, type Literal } from './code-strings.js'
import { literal, type Inner, type Word } from './shell-words.js'

/**
 * Interpreter code that deletes, moves away or overwrites files itself,
 * without a shell: Python `shutil.rmtree`, `os.remove`/`unlink`/`removedirs`,
 * `open(p, 'w')`; Node `fs.rm*`, `fs.unlink*`, `fs.writeFile*`; Perl
 * `rmtree`/`remove_tree`/`unlink`, `open(F, '>', p)`; Ruby `FileUtils.rm_rf`
 * and kin; PHP `unlink`; Lua `os.remove` (the table: code-delete-specs.ts).
 * Each call becomes `rm -rf -- PATH` for the rules to judge, with an unknown
 * path when it is not a literal. Code built at run time (`eval`, `exec`,
 * `__import__(name)`, `getattr`, `send`, a deleting function used as a
 * value) is read when it is a literal and blocked when it is not.
 */

/** Function names that delete or run commands: code that names one as a string and looks functions up by name calls it unseen. */
const HIDDEN =
  /^(rmtree|removedirs|remove|unlink|rmdir|rm|rmSync|rmdirSync|unlinkSync|rm_rf|rm_r|remove_tree|remove_dir|remove_entry|system|popen|exec\w*|spawn\w*|execSync|shell_exec|passthru|proc_open|eval)$/

const unknownPath = (i: number): Word => ({ text: `$__path${i}`, dynamic: true, inner: [] })
const asWords = (v: Value, i: number): Word[] =>
  v.t === 'str' ? [literal(v.v)] : v.t === 'list' ? v.v : [unknownPath(i)]
const rmrf = (paths: Word[]): Inner => ({ words: [literal('rm'), literal('-rf'), literal('--'), ...paths] })

/** The paths a call names by position (every argument with `all`); none found means an unknown path. */
function picked(d: Deleter, pos: Value[]): Word[] {
  const chosen = d.all ? pos : (d.pick ?? [0]).map((i) => pos[i]).filter((v): v is Value => v !== undefined)
  return chosen.flatMap(asWords)
}

/** `Path('x').unlink()`: the receiver's literal path, else unknown. */
function receiver(before: string, strings: readonly Literal[]): Word[] {
  const m = /\b(?:Path|PosixPath|Pathname(?:\s*\.\s*new)?)\s*\(\s*\u0001(\d+)\u0002\s*\)\s*$/.exec(before)
  const s = m ? strings[Number(m[1])] : undefined
  return s && s.kind === 'str' && !s.interp ? [literal(s.value)] : []
}

/** `open(p, 'w')`: the path when the mode writes (or is not a literal), else nothing. */
function modeWrite(mode: NonNullable<Deleter['mode']>, raw: string[], strings: readonly Literal[]): Word[] | undefined {
  const kw = mode.kw ? raw.find((a) => new RegExp(`^${mode.kw}\\s*=`).test(a)) : undefined
  const positional = raw.filter((a) => !/^\w+\s*=(?!=)/.test(a))
  const m = kw ? kw.replace(/^\w+\s*=\s*/, '') : positional[mode.index]
  if (m === undefined) return undefined
  const v = classify(m, strings)
  if (v.t === 'str' && !mode.writes.test(v.v)) return undefined
  return positional[0] === undefined ? [] : asWords(classify(positional[0], strings), 0)
}

/** Perl `open FH, '>', PATH` and `open FH, '>PATH'`: the path written, when the mode writes. */
function perlOpen(pos: Value[]): Word[] | undefined {
  const [, mode, path] = pos
  if (!mode) return undefined
  if (mode.t !== 'str') return []
  const two = /^\s*(\+?[<>]{1,2})\s*([\s\S]*)$/.exec(mode.v)
  const writes = (m: string) => m.includes('>') || m.startsWith('+')
  if (path) return writes(mode.v.trim()) ? asWords(path, 0) : undefined
  return two && writes(two[1]!) ? [literal(two[2]!)] : undefined
}

/**
 * The deletions code in `language` makes (as `rm -rf` argument vectors), and
 * whether it runs code built at run time. `nested` reads a literal handed to
 * `eval`/`exec` as more code of the same language.
 */
export function deleteCalls(language: string, code: string, nested: (code: string) => ShellCalls): ShellCalls {
  const spec = DELETE_SPECS[language]
  const out: ShellCalls = { inner: [], dynamic: false }
  if (!spec) return out
  const { text, strings } = mask(code, spec.syntax)
  const raw = (at: number) => argsAt(text, at, spec.bare) ?? []
  const args = (at: number) =>
    raw(at)
      .map((a) => classify(a, strings))
      .filter((v) => v.t !== 'opt')
  for (const d of spec.deleters(code)) {
    for (const m of text.matchAll(d.re)) {
      const at = m.index + m[0].length
      const paths = d.receiver
        ? receiver(text.slice(0, m.index), strings)
        : d.perlOpen
          ? perlOpen(args(at))
          : d.mode
            ? modeWrite(d.mode, raw(at), strings)
            : picked(d, args(at))
      if (paths) out.inner.push(rmrf(paths.length > 0 ? paths : [unknownPath(0)]))
    }
  }
  // Code with its import lines dropped: `from shutil import rmtree` names the function without using it as a value.
  const body = text.replace(/(^|;)[ \t]*(?:from\s+\S+\s+)?import\b[^\n;]*/gm, '$1')
  if (spec.references && body.search(spec.references) !== -1) out.dynamic = true
  for (const m of text.matchAll(spec.evals)) {
    const [first] = args(m.index + m[0].length)
    if (first?.t === 'str') {
      const inner = nested(first.v)
      out.inner.push(...inner.inner)
      out.dynamic ||= inner.dynamic
    } else if (first || !/^(?:eval|Function)\b/.test(m[0])) out.dynamic = true
  }
  const looksUp = [...text.matchAll(spec.lookups)]
  // A function picked by name (`getattr`, `obj[…]`, `send`), not a module by name (`require`, `__import__`).
  const picks = looksUp.filter((m) => !/^(?:require|import|__import__|import_module)\b/.test(m[0]))
  if (
    picks.length > 0 &&
    (strings.some((s: Literal) => s.kind === 'str' && HIDDEN.test(s.value.trim())) ||
      /\b(?:send|method)\s*\(?\s*:(?:rm|remove|unlink|delete|system|exec|spawn)/.test(text))
  )
    out.dynamic = true
  for (const m of looksUp) {
    // `__import__(name)`, `getattr(os, name)`, `require(x)`, `obj[name](…)`: a name computed at run time.
    if (/\[\s*$/.test(m[0]) || /\]\s*$/.test(m[0])) {
      if (!/^\w\s*\[\s*\u0001\d+\u0002\s*\]$/.test(m[0].trim())) out.dynamic = true
      continue
    }
    const a = args(m.index + m[0].length)
    const name = /getattr/.test(m[0]) ? a[1] : a[0]
    if (name && name.t !== 'str') out.dynamic = true
  }
  return out
}
