import { expand, extractCommands, type SimpleCommand } from './extract.js'
import { runFile } from './stdin-programs.js'
import { loadBashParser, type BashParser } from './grammar.js'
import type { GuardOptions } from './paths.js'
import { PARSE_ERROR_RULE, RULES, TOO_DEEP_RULE } from './rules.js'
import { literal, type Nesting, type ScriptContext } from './shell-words.js'
import { markLinkedTargets } from './links.js'
import { markWriteThenRun } from './write-then-run.js'

export type { GuardOptions } from './paths.js'

/** The guard's answer: allowed, or blocked by a named rule. */
export type GuardVerdict =
  { ok: true; commands: number } | { ok: false; error: { rule: string; message: string; command: string } }

const MAX_DEPTH = 5
/** Nested scripts one check may read (`parallel ::: …` fans out): past this the guard gives up, blocking. */
const MAX_SCRIPTS = 256

/**
 * The shell guard: parses with a real bash grammar, walks every command
 * (substitutions, subshells, pipelines, lists, functions, heredocs fed to
 * shells), peels every command that runs another (wrappers like sudo and
 * strace, shell strings like `sh -c` and `su -c`, input runners like xargs
 * and `find -exec`, interpreter code like `python3 -c`), recursively, and
 * checks each command against the rule table. It follows what the script
 * sets (variables, loops, `cd`) to know what each command destroys: a target
 * outside the workspace, or one it cannot know before it runs, is blocked
 * (see targets.ts, rules-targets.ts). It fails closed: what does not
 * parse, or nests too deep, is blocked. A safety net; the sandbox is the boundary.
 */
export class ShellGuard {
  private parser: Promise<BashParser> | undefined

  private load(): Promise<BashParser> {
    this.parser ??= loadBashParser()
    return this.parser
  }

  /**
   * Checks a shell command line (one string) or an argument vector (several
   * words, run without a shell). `opts.cwd`, the workspace (an absolute
   * path), is where destructive commands may act: relative paths that do not
   * climb out with `..` are inside it, absolute ones only when under it.
   * Without it, only relative paths are inside.
   */
  async check(input: string | readonly string[], opts: GuardOptions = {}): Promise<GuardVerdict> {
    const parser = await this.load()
    let failure: GuardVerdict | undefined
    const fail = (rule: { id: string; message: string }, text: string) => {
      failure ??= { ok: false, error: { rule: rule.id, message: rule.message, command: text.slice(0, 200) } }
    }
    const nesting = (depth: number): Nesting => ({
      script: (text, ctx) => collect(text, depth + 1, ctx),
      expand: (words, place) => expand(words, place, nesting(depth)),
      tooDeep: (source) => fail(TOO_DEEP_RULE, source),
    })
    let scripts = 0
    const collect = (text: string, depth: number, ctx: ScriptContext): SimpleCommand[] => {
      if (depth > MAX_DEPTH || ++scripts > MAX_SCRIPTS) {
        fail(TOO_DEEP_RULE, text)
        return []
      }
      let tree: ReturnType<BashParser['parse']>
      try {
        tree = parser.parse(text)
      } catch {
        // The grammar's wasm gives up on a huge input (tens of MB): what cannot be read is blocked.
        tree = null
      }
      if (!tree || tree.rootNode.hasError) {
        fail(PARSE_ERROR_RULE, text)
        tree?.delete()
        return []
      }
      try {
        return extractCommands(tree.rootNode, nesting(depth), ctx)
      } finally {
        tree.delete()
      }
    }
    // An argv is one command whose words are already literal: it is peeled like any command of a script.
    const commands =
      typeof input === 'string'
        ? collect(input, 0, { pipedFrom: [] })
        : expand(input.map(literal), { pipedFrom: [], writesTo: [], source: input.join(' ') }, nesting(0))
    if (failure) return failure
    markWriteThenRun(commands)
    // A program the same line wrote with a known content is read back and judged like the rest.
    for (const c of [...commands])
      for (const text of c.runsContent ?? []) commands.push(...runFile(c, text, nesting(0)))
    if (failure) return failure
    markLinkedTargets(commands)
    return this.firstBlocked(commands, opts) ?? { ok: true, commands: commands.length }
  }

  private firstBlocked(commands: readonly SimpleCommand[], opts: GuardOptions): GuardVerdict | undefined {
    for (const rule of RULES) {
      const hit = commands.find((c) => rule.test(c, opts))
      if (hit) return { ok: false, error: { rule: rule.id, message: rule.message, command: hit.source.slice(0, 200) } }
    }
    return undefined
  }
}
