import type { Node } from 'web-tree-sitter'
import { INPUT_RUNNERS } from './input-runners.js'
import { interpreter, languageOf } from './interpreters.js'
import { envCommand, OPTION_RUNNERS } from './option-runners.js'
import { feedStdin, printed, wdOf, writtenContent } from './stdin-programs.js'
import { Scope } from './scope.js'
import { SHELL_RUNNERS } from './shell-runners.js'
import { WRAPPERS } from './wrappers.js'
import {
  basename,
  INPUT_REF,
  INPUT_VAR,
  inputWord,
  literal,
  unquote,
  type Inner,
  type Nesting,
  type Runner,
  type ScriptContext,
  type SimpleCommand,
  type Step,
  type Place,
  type Word,
  type Write,
} from './shell-words.js'

export type { SimpleCommand, Word } from './shell-words.js'

/** Every command that runs another: wrappers, shell-string runners, input runners (interpreters are found by language). */
const RUNNERS: Readonly<Record<string, Runner>> = { ...WRAPPERS, ...SHELL_RUNNERS, ...INPUT_RUNNERS, ...OPTION_RUNNERS }

function stepOf(name: string, words: Word[]): Step | undefined {
  if (Object.hasOwn(RUNNERS, name)) return RUNNERS[name]!(words)
  const lang = languageOf(name)
  return lang ? interpreter(lang)(words) : undefined
}

/** Wrappers nested deeper than this are blocked rather than followed. */
const MAX_PEEL = 16

/** Where a command stands: what feeds it, where it writes, its text, its function, what input stands for. */
export type { Place } from './shell-words.js'

/**
 * Peels a command's words into the commands that actually run: wrappers
 * vanish (`sudo`, `xargs`, `strace` → their command), shell strings and
 * interpreter code become nested scripts, and runners that matter themselves
 * (`find`, `python3 -c`, `sh -c`) stay. The one mechanism for scripts and argv.
 */
export function expand(words: Word[], place: Place, nest: Nesting): SimpleCommand[] {
  const out: SimpleCommand[] = []
  const visit = (ws: Word[], depth: number, input: Word | undefined): void => {
    const head = ws[0]
    if (!head) return
    if (depth > MAX_PEEL) return nest.tooDeep(place.source)
    const name = basename(head.text)
    const step = head.dynamic ? undefined : stepOf(name, ws)
    if (!step || step.keep) {
      out.push({
        name,
        ...(!head.dynamic && head.text.includes('/') ? { path: head.text } : {}),
        nameDynamic: head.dynamic,
        args: ws.slice(1),
        pipedFrom: place.pipedFrom,
        writesTo: place.writesTo,
        writes: place.writes ?? [],
        wd: wdOf(place.wd),
        source: place.source,
        ...(place.inFunction !== undefined ? { inFunction: place.inFunction } : {}),
        ...(step?.program !== undefined ? { program: step.program } : {}),
      })
    }
    for (const inner of step?.inner ?? []) run(inner, depth + 1, inner.input ?? input)
  }
  const run = (inner: Inner, depth: number, input: Word | undefined): void => {
    if ('words' in inner) return visit(inner.words, depth, input)
    out.push(
      ...nest.script(inner.script, {
        pipedFrom: place.pipedFrom,
        wd: wdOf(place.wd),
        ...(inner.positional ? { positional: inner.positional } : {}),
        ...(input ? { input } : {}),
      }),
    )
  }
  visit(words, 0, place.input)
  return out
}

/** The files a command's redirections write to (`> f`, `>> f`), as text. */
const outputs = (writes: readonly Write[]): string[] => writes.filter((w) => !w.read).map((w) => w.target.text)

const DYNAMIC = new Set([
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
])
const POSITIONAL = /\$(?:\{([0-9]+|[@*])\}|([0-9@*]))/g
const WHOLE_POSITIONAL = /^\$(?:\{([0-9]+|[@*])\}|([0-9@*]))$/

/**
 * Extracts every simple command of a parsed script, nested ones included
 * (substitutions, subshells, functions, pipelines, heredocs and here-strings
 * fed to shells). `ctx` says what the script's `$1…` and input stand for.
 */
export function extractCommands(root: Node, nest: Nesting, ctx: ScriptContext = { pipedFrom: [] }): SimpleCommand[] {
  return new Extractor(nest, ctx).walk(root, ctx.pipedFrom)
}

/** What a statement's redirections say: the files it writes or reads, its stdin text, the pipelines a heredoc carries. */
interface Redirections {
  targets: Write[]
  stdin: string | undefined
  inHeredoc: Node[]
}

/** What a word's nodes hold: whether any part expands at run time, and the commands its substitutions run. */
interface WordParts {
  dynamic: boolean
  inner: SimpleCommand[]
}

/** One walk over one script, in order: the scope it builds and the function it is in. */
class Extractor {
  private inFunction: string | undefined
  private readonly scope: Scope

  constructor(
    private readonly nest: Nesting,
    private readonly ctx: ScriptContext,
  ) {
    this.scope = new Scope(ctx.wd === undefined ? '.' : ctx.wd, ctx.positional, () => this.inFunction !== undefined)
  }

  walk(node: Node, pipedFrom: SimpleCommand[], writes: Write[] = []): SimpleCommand[] {
    switch (node.type) {
      case 'command':
        return this.command(node, pipedFrom, writes)
      case 'variable_assignment':
      case 'unset_command':
        return this.assignment(node, pipedFrom, writes)
      case 'for_statement':
      case 'while_statement':
      case 'until_statement':
        this.scope.track(node)
        this.scope.preScan(node)
        return this.children(node, pipedFrom, writes)
      case 'subshell':
      case 'command_substitution':
      case 'process_substitution':
        return this.subshell(node, pipedFrom, writes)
      case 'function_definition':
        return this.functionBody(node, pipedFrom, writes)
      case 'pipeline':
        return this.pipeline(node, pipedFrom)
      case 'redirected_statement':
        return this.redirected(node, pipedFrom)
      default:
        return this.children(node, pipedFrom, writes)
    }
  }

  private children(node: Node, pipedFrom: SimpleCommand[], writes: Write[]): SimpleCommand[] {
    return node.namedChildren.flatMap((c) => (c ? this.walk(c, pipedFrom, writes) : []))
  }

  /** `$1`, `"$@"`, and the input stand-in, read back from the context the script runs in. */
  private resolve(w: Word, raw: string): Word[] {
    const bare = unquote(raw)
    if (bare.includes(INPUT_VAR)) {
      if (bare === INPUT_REF || bare === `\${${INPUT_VAR}}`) return [this.ctx.input ?? inputWord()]
      return [{ text: bare, dynamic: true, inner: w.inner, fromInput: {} }]
    }
    const pos = this.ctx.positional
    if (!pos || !w.dynamic || this.inFunction !== undefined) return [w]
    const pick = (k: string): Word[] => (k === '@' || k === '*' ? pos.slice(1) : [pos[Number(k)] ?? literal('')])
    const whole = WHOLE_POSITIONAL.exec(bare)
    if (whole) return pick(whole[1] ?? whole[2]!)
    const refs = [...bare.matchAll(POSITIONAL)].map((m) => pick(m[1] ?? m[2]!))
    if (refs.length === 0) return [w]
    if (refs.flat().some((r) => r.fromInput)) return [{ text: bare, dynamic: true, inner: w.inner, fromInput: {} }]
    if (/[$`]/.test(bare.replace(POSITIONAL, '')) || refs.flat().some((r) => r.dynamic)) return [w]
    return [
      {
        text: bare.replace(POSITIONAL, (_, a?: string, b?: string) =>
          pick((a ?? b)!)
            .map((r) => r.text)
            .join(' '),
        ),
        dynamic: false,
        inner: w.inner,
      },
    ]
  }

  private word(node: Node): Word[] {
    const parts: WordParts = { dynamic: DYNAMIC.has(node.type), inner: [] }
    this.wordParts(node, parts)
    const w: Word = { text: parts.dynamic ? node.text : unquote(node.text), dynamic: parts.dynamic, inner: parts.inner }
    return this.resolve(w, node.text).map((r) => (r === w ? this.withValues(w, node) : r))
  }

  /** Marks `parts` dynamic where `n` expands, and walks the commands its substitutions run. */
  private wordParts(n: Node, parts: WordParts): void {
    if (DYNAMIC.has(n.type)) parts.dynamic = true
    if (n.type === 'command_substitution' || n.type === 'process_substitution') {
      parts.inner.push(...this.walk(n, []))
      return
    }
    for (const c of n.namedChildren) if (c) this.wordParts(c, parts)
  }

  /** A word with what the script lets the guard know of it: a variable's value, a brace expansion. */
  private withValues(w: Word, node: Node): Word {
    if (!w.dynamic && !node.text.includes('{')) return w
    const values = this.scope.values(node)
    if (!values) return w
    if (values.length === 1)
      return values[0] === w.text && !w.dynamic ? w : { text: values[0]!, dynamic: false, inner: w.inner }
    return { ...w, values }
  }

  /** The text of a here-string: its value when static, its words as written otherwise. */
  private hereString(node: Node): string | undefined {
    const w = node.namedChildren[0] ? this.word(node.namedChildren[0])[0] : undefined
    return w && (w.dynamic ? unquote(w.text) : w.text)
  }

  private command(node: Node, pipedFrom: SimpleCommand[], writes: Write[]): SimpleCommand[] {
    const nameNode = node.childForFieldName('name')
    const words: Word[] = []
    let stdin: string | undefined
    if (nameNode) words.push(...this.word(nameNode.namedChildren[0] ?? nameNode))
    const bodies: SimpleCommand[] = []
    for (const c of node.namedChildren) {
      if (c?.type === 'variable_assignment') bodies.push(...this.envCommands(c, pipedFrom))
      if (!c || c.id === nameNode?.id || c.type === 'variable_assignment' || c.type === 'file_redirect') continue
      if (c.type === 'herestring_redirect') stdin = this.hereString(c)
      // `coproc ( … )`, `coproc { … }`: a compound command as an argument runs.
      else if (c.type === 'subshell' || c.type === 'compound_statement') bodies.push(...this.walk(c, pipedFrom, writes))
      else words.push(...this.word(c))
    }
    const nested = [...words.flatMap((w) => w.inner), ...bodies]
    const place: Place = {
      pipedFrom,
      writesTo: outputs(writes),
      writes,
      wd: this.scope.wd,
      source: node.text,
      ...(this.inFunction !== undefined ? { inFunction: this.inFunction } : {}),
      ...(this.ctx.input ? { input: this.ctx.input } : {}),
    }
    const cmds = expand(words, place, this.nest)
    // `exec > /etc/passwd`, `sudo > f`: the wrapper vanished, its redirection did not.
    if (writes.length > 0 && !cmds.some((c) => c.writes === writes))
      cmds.push(this.redirectOnly(pipedFrom, writes, node.text))
    if (stdin !== undefined) for (const c of [...cmds]) cmds.push(...feedStdin(c, stdin, this.nest))
    this.scope.track(node, words)
    return [...cmds, ...nested]
  }

  /** `GIT_PAGER='…' git log`, `export LD_PRELOAD=…`: a variable whose value something runs. */
  private envCommands(a: Node, pipedFrom: SimpleCommand[]): SimpleCommand[] {
    const value = a.childForFieldName('value')
    const inner = value && envCommand(a.childForFieldName('name')?.text ?? '', this.word(value)[0]!)
    if (!inner) return []
    return 'script' in inner
      ? this.nest.script(inner.script, { pipedFrom, wd: this.scope.wd })
      : expand(inner.words, { pipedFrom, writesTo: [], source: a.text, wd: this.scope.wd }, this.nest)
  }

  /** A redirection with no command left to carry it: it still truncates its target. */
  private redirectOnly(pipedFrom: SimpleCommand[], writes: Write[], source: string): SimpleCommand {
    return {
      name: ':',
      nameDynamic: false,
      args: [],
      pipedFrom,
      writesTo: outputs(writes),
      writes,
      wd: this.scope.wd,
      source,
    }
  }

  private assignment(node: Node, pipedFrom: SimpleCommand[], writes: Write[]): SimpleCommand[] {
    const found = [
      ...this.children(node, pipedFrom, writes),
      ...(node.type === 'variable_assignment' ? this.envCommands(node, pipedFrom) : []),
    ]
    this.scope.track(node)
    return found
  }

  /** A subshell or substitution: what it sets stays inside it. */
  private subshell(node: Node, pipedFrom: SimpleCommand[], writes: Write[]): SimpleCommand[] {
    const saved = this.scope.save()
    try {
      return this.children(node, pipedFrom, writes)
    } finally {
      this.scope.restore(saved)
    }
  }

  private functionBody(node: Node, pipedFrom: SimpleCommand[], writes: Write[]): SimpleCommand[] {
    const outer = this.inFunction
    this.inFunction = node.childForFieldName('name')?.text
    try {
      return this.children(node, pipedFrom, writes)
    } finally {
      this.inFunction = outer
    }
  }

  private pipeline(node: Node, pipedFrom: SimpleCommand[]): SimpleCommand[] {
    const found: SimpleCommand[] = []
    let before: SimpleCommand[] = [...pipedFrom]
    let fed: string | undefined
    for (const stage of node.namedChildren) {
      if (!stage) continue
      const cmds = this.walk(stage, before)
      // `echo 'rm -rf /' | sh`: what a literal echo prints is the next stage's program.
      if (fed !== undefined)
        for (const c of [...cmds]) if (c.pipedFrom === before) cmds.push(...feedStdin(c, fed, this.nest))
      found.push(...cmds)
      fed = stage.type === 'command' ? printed(cmds[0]) : undefined
      before = [...before, ...cmds]
    }
    return found
  }

  private redirected(node: Node, pipedFrom: SimpleCommand[]): SimpleCommand[] {
    const { targets, stdin, inHeredoc } = this.redirections(node)
    const body =
      node.childForFieldName('body') ?? node.namedChildren.find((c) => c !== null && !c.type.endsWith('redirect'))
    // `> /etc/passwd` alone: a redirection with no command still truncates its target.
    const cmds = body ? this.walk(body, pipedFrom, targets) : [this.redirectOnly(pipedFrom, targets, node.text)]
    for (const t of targets)
      if (body?.type === 'command' && !t.append && !t.read) t.content = writtenContent(cmds[0], stdin)
    // `cat <<EOF | sh`: the pipeline hangs off the heredoc in this grammar.
    for (const h of inHeredoc) cmds.push(...this.walk(h, cmds))
    if (stdin !== undefined) for (const c of [...cmds]) cmds.push(...feedStdin(c, stdin, this.nest))
    return cmds
  }

  private redirections(node: Node): Redirections {
    const found: Redirections = { targets: [], stdin: undefined, inHeredoc: [] }
    for (const c of node.namedChildren) {
      if (!c) continue
      if (c.type === 'file_redirect') found.targets.push(...this.fileTargets(c))
      if (c.type === 'herestring_redirect') found.stdin = this.hereString(c)
      if (c.type === 'heredoc_redirect') {
        for (const h of c.namedChildren) {
          if (!h) continue
          if (h.type === 'heredoc_body') found.stdin = h.text
          else if (h.type !== 'heredoc_start' && h.type !== 'heredoc_end') found.inHeredoc.push(h)
        }
      }
    }
    return found
  }

  /** The files one `>`, `>>`, `<>` or `<` redirection names. */
  private fileTargets(c: Node): Write[] {
    const dest = c.childForFieldName('destination') ?? c.namedChildren.at(-1)
    const op = c.children.find((k) => k !== null && !k.isNamed && /[<>]/.test(k.type))?.type ?? ''
    // `>&2`, `2>&1`: a descriptor, not a file.
    const toFile = !(op.includes('&') && dest && /^(\d+|-)$/.test(dest.text))
    if (!(dest && toFile && (op === '<' || op.includes('>')))) return []
    return this.word(dest).map((target) => ({
      target,
      append: op.includes('>>') || op === '<>',
      ...(op === '<' ? { read: true } : {}),
    }))
  }
}
