import type { Node } from 'web-tree-sitter'
import { INPUT_RUNNERS } from './input-runners.js'
import { interpreter, languageOf, readsProgramFromStdin, shellCalls } from './interpreters.js'
import { SHELL_RUNNERS } from './shell-runners.js'
import { WRAPPERS } from './wrappers.js'
import { basename, INPUT_REF, INPUT_VAR, inputWord, literal, SHELLS, unquote, type Inner, type Nesting, type Runner, type ScriptContext, type SimpleCommand, type Step, type Word } from './words.js'

export type { SimpleCommand, Word } from './words.js'

/** Every command that runs another: wrappers, shell-string runners, input runners (interpreters are found by language). */
const RUNNERS: Readonly<Record<string, Runner>> = { ...WRAPPERS, ...SHELL_RUNNERS, ...INPUT_RUNNERS }

function stepOf(name: string, words: Word[]): Step | undefined {
  if (Object.hasOwn(RUNNERS, name)) return RUNNERS[name]!(words)
  const lang = languageOf(name)
  return lang ? interpreter(lang)(words) : undefined
}

/** Wrappers nested deeper than this are blocked rather than followed. */
const MAX_PEEL = 16

/** Where a command stands: what feeds it, where it writes, its text, its function, what input stands for. */
export interface Place {
  pipedFrom: SimpleCommand[]
  writesTo: string[]
  source: string
  inFunction?: string
  input?: Word
}

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
      out.push({ name, nameDynamic: head.dynamic, args: ws.slice(1), pipedFrom: place.pipedFrom, writesTo: place.writesTo, source: place.source, ...(place.inFunction !== undefined ? { inFunction: place.inFunction } : {}), ...(step?.program !== undefined ? { program: step.program } : {}) })
    }
    for (const inner of step?.inner ?? []) run(inner, depth + 1, inner.input ?? input)
  }
  const run = (inner: Inner, depth: number, input: Word | undefined): void => {
    if ('words' in inner) return visit(inner.words, depth, input)
    out.push(...nest.script(inner.script, { pipedFrom: place.pipedFrom, ...(inner.positional ? { positional: inner.positional } : {}), ...(input ? { input } : {}) }))
  }
  visit(words, 0, place.input)
  return out
}

/** Program text arriving on a command's stdin (heredoc, here-string, `echo … |`): a shell or interpreter that reads its program there runs it. */
export function feedStdin(cmd: SimpleCommand, text: string, nest: Nesting): SimpleCommand[] {
  if (!readsProgramFromStdin(cmd)) return []
  if (SHELLS.has(cmd.name)) return nest.script(text, { pipedFrom: cmd.pipedFrom })
  const lang = languageOf(cmd.name)
  if (!lang) return []
  cmd.program = text
  const place: Place = { pipedFrom: cmd.pipedFrom, writesTo: [], source: cmd.source }
  return shellCalls(lang, text).inner.flatMap((inner) => ('words' in inner ? expand(inner.words, place, nest) : nest.script(inner.script, { pipedFrom: cmd.pipedFrom })))
}

/** What `echo`/`printf` with literal arguments writes, else undefined. */
function printed(cmd: SimpleCommand | undefined): string | undefined {
  if (!cmd || cmd.args.some((a) => a.dynamic) || (cmd.name !== 'echo' && cmd.name !== 'printf')) return undefined
  const esc = (s: string) => s.replace(/\\(0[0-7]{0,3}|x[0-9a-fA-F]{1,2}|[\s\S])/g, (_, e: string) => (e[0] === '0' ? String.fromCharCode(parseInt(e, 8)) : e[0] === 'x' && e.length > 1 ? String.fromCharCode(parseInt(e.slice(1), 16)) : ({ n: '\n', t: '\t', r: '\r' } as Record<string, string>)[e] ?? e))
  const a = cmd.args.map((w) => w.text)
  if (cmd.name === 'echo') {
    let i = 0
    while (/^-[neE]+$/.test(a[i] ?? '')) i++
    return esc(a.slice(i).join(' '))
  }
  const [format = '', ...values] = a
  let out = ''
  let k = 0
  // The format is reused while arguments remain, as printf does.
  do {
    out += esc(format).replace(/%(%|[-+ #0]*\d*(?:\.\d+)?[sbdiouxXcfeEgG])/g, (_, spec: string) => (spec === '%' ? '%' : (values[k++] ?? '')))
  } while (k < values.length && /%[^%]/.test(format))
  return out
}

const DYNAMIC = new Set(['simple_expansion', 'expansion', 'command_substitution', 'process_substitution', 'arithmetic_expansion'])
const POSITIONAL = /\$(?:\{([0-9]+|[@*])\}|([0-9@*]))/g
const WHOLE_POSITIONAL = /^\$(?:\{([0-9]+|[@*])\}|([0-9@*]))$/

/**
 * Extracts every simple command of a parsed script, nested ones included
 * (substitutions, subshells, functions, pipelines, heredocs and here-strings
 * fed to shells). `ctx` says what the script's `$1…` and input stand for.
 */
export function extractCommands(root: Node, nest: Nesting, ctx: ScriptContext = { pipedFrom: [] }): SimpleCommand[] {
  let inFunction: string | undefined

  /** `$1`, `"$@"`, and the input stand-in, read back from the context the script runs in. */
  const resolve = (w: Word, raw: string): Word[] => {
    const bare = unquote(raw)
    if (bare.includes(INPUT_VAR)) {
      if (bare === INPUT_REF || bare === `\${${INPUT_VAR}}`) return [ctx.input ?? inputWord()]
      return [{ text: bare, dynamic: true, inner: w.inner, fromInput: {} }]
    }
    const pos = ctx.positional
    if (!pos || !w.dynamic || inFunction !== undefined) return [w]
    const pick = (k: string): Word[] => (k === '@' || k === '*' ? pos.slice(1) : [pos[Number(k)] ?? literal('')])
    const whole = WHOLE_POSITIONAL.exec(bare)
    if (whole) return pick(whole[1] ?? whole[2]!)
    const refs = [...bare.matchAll(POSITIONAL)].map((m) => pick(m[1] ?? m[2]!))
    if (refs.length === 0) return [w]
    if (refs.flat().some((r) => r.fromInput)) return [{ text: bare, dynamic: true, inner: w.inner, fromInput: {} }]
    if (/[$`]/.test(bare.replace(POSITIONAL, '')) || refs.flat().some((r) => r.dynamic)) return [w]
    return [{ text: bare.replace(POSITIONAL, (_, a?: string, b?: string) => pick((a ?? b)!).map((r) => r.text).join(' ')), dynamic: false, inner: w.inner }]
  }

  const word = (node: Node): Word[] => {
    const inner: SimpleCommand[] = []
    let dynamic = DYNAMIC.has(node.type)
    const visit = (n: Node) => {
      if (DYNAMIC.has(n.type)) dynamic = true
      if (n.type === 'command_substitution' || n.type === 'process_substitution') {
        inner.push(...walk(n, []))
        return
      }
      for (const c of n.namedChildren) if (c) visit(c)
    }
    visit(node)
    return resolve({ text: dynamic ? node.text : unquote(node.text), dynamic, inner }, node.text)
  }
  /** The text of a here-string: its value when static, its words as written otherwise. */
  const hereString = (node: Node): string | undefined => {
    const w = node.namedChildren[0] ? word(node.namedChildren[0])[0] : undefined
    return w && (w.dynamic ? unquote(w.text) : w.text)
  }

  const command = (node: Node, pipedFrom: SimpleCommand[], writesTo: string[]): SimpleCommand[] => {
    const nameNode = node.childForFieldName('name')
    const words: Word[] = []
    let stdin: string | undefined
    if (nameNode) words.push(...word(nameNode.namedChildren[0] ?? nameNode))
    for (const c of node.namedChildren) {
      if (!c || c.id === nameNode?.id || c.type === 'variable_assignment' || c.type === 'file_redirect') continue
      if (c.type === 'herestring_redirect') stdin = hereString(c)
      else words.push(...word(c))
    }
    const nested = words.flatMap((w) => w.inner)
    const place: Place = { pipedFrom, writesTo, source: node.text, ...(inFunction !== undefined ? { inFunction } : {}), ...(ctx.input ? { input: ctx.input } : {}) }
    const cmds = expand(words, place, nest)
    if (stdin !== undefined) for (const c of [...cmds]) cmds.push(...feedStdin(c, stdin, nest))
    return [...cmds, ...nested]
  }

  const walk = (node: Node, pipedFrom: SimpleCommand[], writesTo: string[] = []): SimpleCommand[] => {
    switch (node.type) {
      case 'command':
        return command(node, pipedFrom, writesTo)
      case 'function_definition': {
        const outer = inFunction
        inFunction = node.childForFieldName('name')?.text
        try {
          return node.namedChildren.flatMap((c) => (c ? walk(c, pipedFrom, writesTo) : []))
        } finally {
          inFunction = outer
        }
      }
      case 'pipeline': {
        const found: SimpleCommand[] = []
        let before: SimpleCommand[] = [...pipedFrom]
        let fed: string | undefined
        for (const stage of node.namedChildren) {
          if (!stage) continue
          const cmds = walk(stage, before)
          // `echo 'rm -rf /' | sh`: what a literal echo prints is the next stage's program.
          if (fed !== undefined) for (const c of [...cmds]) if (c.pipedFrom === before) cmds.push(...feedStdin(c, fed, nest))
          found.push(...cmds)
          fed = stage.type === 'command' ? printed(cmds[0]) : undefined
          before = [...before, ...cmds]
        }
        return found
      }
      case 'redirected_statement': {
        const targets: string[] = []
        let stdin: string | undefined
        const inHeredoc: Node[] = []
        for (const c of node.namedChildren) {
          if (!c) continue
          if (c.type === 'file_redirect') {
            const dest = c.childForFieldName('destination') ?? c.namedChildren.at(-1)
            if (dest) targets.push(unquote(dest.text))
          }
          if (c.type === 'herestring_redirect') stdin = hereString(c)
          if (c.type === 'heredoc_redirect') {
            for (const h of c.namedChildren) {
              if (!h) continue
              if (h.type === 'heredoc_body') stdin = h.text
              else if (h.type !== 'heredoc_start' && h.type !== 'heredoc_end') inHeredoc.push(h)
            }
          }
        }
        const body = node.childForFieldName('body') ?? node.namedChildren[0]
        const cmds = body ? walk(body, pipedFrom, targets) : []
        // `cat <<EOF | sh`: the pipeline hangs off the heredoc in this grammar.
        for (const h of inHeredoc) cmds.push(...walk(h, cmds))
        if (stdin !== undefined) for (const c of [...cmds]) cmds.push(...feedStdin(c, stdin, nest))
        return cmds
      }
      default: {
        const found: SimpleCommand[] = []
        for (const c of node.namedChildren) if (c) found.push(...walk(c, pipedFrom, writesTo))
        return found
      }
    }
  }

  return walk(root, ctx.pipedFrom)
}
