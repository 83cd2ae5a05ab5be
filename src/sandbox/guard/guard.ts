import { extractCommands, type SimpleCommand, type Word } from './extract.js'
import { loadBashParser, type BashParser } from './grammar.js'
import { PARSE_ERROR_RULE, RULES, TOO_DEEP_RULE } from './rules.js'

/** The guard's answer: allowed, or blocked by a named rule. */
export type GuardVerdict = { ok: true; commands: number } | { ok: false; error: { rule: string; message: string; command: string } }

const MAX_DEPTH = 5

/**
 * The shell guard: parses with a real bash grammar, walks every command
 * (substitutions, subshells, pipelines, lists, functions, heredocs fed to
 * shells, `sh -c` strings and `eval`, recursively), peels wrappers, and
 * checks each against the rule table. It fails closed: what does not parse
 * is blocked. A safety net; the sandbox is the boundary.
 */
export class ShellGuard {
  private parser: Promise<BashParser> | undefined

  private load(): Promise<BashParser> {
    this.parser ??= loadBashParser()
    return this.parser
  }

  /** Checks a shell command line (one string) or an argument vector (several words, run without a shell). */
  async check(input: string | readonly string[]): Promise<GuardVerdict> {
    const parser = await this.load()
    if (typeof input === 'string') return this.checkScript(parser, input)
    if (input.length === 0) return { ok: true, commands: 0 }
    // An argv is one command whose words are already literal.
    const words: Word[] = input.map((text) => ({ text, dynamic: false, inner: [] }))
    const { peel, basename } = await import('./extract.js')
    const peeled = peel(words)
    if (!peeled) return { ok: true, commands: 0 }
    const cmd: SimpleCommand = { name: basename(peeled[0]!.text), nameDynamic: false, args: peeled.slice(1), pipedFrom: [], writesTo: [], source: input.join(' ') }
    const blocked = this.firstBlocked([cmd])
    if (blocked) return blocked
    // `bash -c '…'` given as argv: the string is a script.
    const i = cmd.args.findIndex((a) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a.text))
    if (['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash'].includes(cmd.name) && i !== -1 && cmd.args[i + 1]) return this.checkScript(parser, cmd.args[i + 1]!.text)
    if (cmd.name === 'eval') return this.checkScript(parser, cmd.args.map((a) => a.text).join(' '))
    return { ok: true, commands: 1 }
  }

  private checkScript(parser: BashParser, script: string): GuardVerdict {
    let failure: GuardVerdict | undefined
    const collect = (text: string, depth: number): SimpleCommand[] => {
      if (depth > MAX_DEPTH) {
        failure ??= { ok: false, error: { rule: TOO_DEEP_RULE.id, message: TOO_DEEP_RULE.message, command: text.slice(0, 200) } }
        return []
      }
      const tree = parser.parse(text)
      if (!tree || tree.rootNode.hasError) {
        failure ??= { ok: false, error: { rule: PARSE_ERROR_RULE.id, message: PARSE_ERROR_RULE.message, command: text.slice(0, 200) } }
        tree?.delete()
        return []
      }
      try {
        return extractCommands(tree.rootNode, (nested) => collect(nested, depth + 1))
      } finally {
        tree.delete()
      }
    }
    const commands = collect(script, 0)
    if (failure) return failure
    return this.firstBlocked(commands) ?? { ok: true, commands: commands.length }
  }

  private firstBlocked(commands: readonly SimpleCommand[]): GuardVerdict | undefined {
    for (const rule of RULES) {
      const hit = commands.find((c) => rule.test(c))
      if (hit) return { ok: false, error: { rule: rule.id, message: rule.message, command: hit.source.slice(0, 200) } }
    }
    return undefined
  }
}
