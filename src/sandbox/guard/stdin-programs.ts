import { languageOf, readsProgramFromStdin, shellCalls } from './interpreters.js'
import { basename, SHELLS, type Nesting, type Place, type SimpleCommand } from './shell-words.js'

/** The working directory a command runs in: the workspace unless the script changed it (null: unknown). */
export const wdOf = (wd: string | null | undefined): string | null => (wd === undefined ? '.' : wd)

/** Program text arriving on a command's stdin (heredoc, here-string, `echo … |`): a shell or interpreter that reads its program there runs it. */
export function feedStdin(cmd: SimpleCommand, text: string, nest: Nesting): SimpleCommand[] {
  if (!readsProgramFromStdin(cmd)) return []
  if (SHELLS.has(cmd.name)) return nest.script(text, { pipedFrom: cmd.pipedFrom, wd: wdOf(cmd.wd) })
  const lang = languageOf(cmd.name)
  if (!lang) return []
  cmd.program = text
  const place: Place = { pipedFrom: cmd.pipedFrom, writesTo: [], source: cmd.source, wd: wdOf(cmd.wd) }
  return shellCalls(lang, text).inner.flatMap((inner) =>
    'words' in inner
      ? nest.expand(inner.words, place)
      : nest.script(inner.script, { pipedFrom: cmd.pipedFrom, wd: wdOf(cmd.wd) }),
  )
}

/** What `echo`/`printf` with literal arguments writes, else undefined. */
export function printed(cmd: SimpleCommand | undefined): string | undefined {
  if (!cmd || cmd.args.some((a) => a.dynamic) || (cmd.name !== 'echo' && cmd.name !== 'printf')) return undefined
  const esc = (s: string) =>
    s.replace(/\\(0[0-7]{0,3}|x[0-9a-fA-F]{1,2}|[\s\S])/g, (_, e: string) =>
      e[0] === '0'
        ? String.fromCharCode(parseInt(e, 8))
        : e[0] === 'x' && e.length > 1
          ? String.fromCharCode(parseInt(e.slice(1), 16))
          : (({ n: '\n', t: '\t', r: '\r' } as Record<string, string>)[e] ?? e),
    )
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
    out += esc(format).replace(/%(%|[-+ #0]*\d*(?:\.\d+)?[sbdiouxXcfeEgG])/g, (_, spec: string) =>
      spec === '%' ? '%' : (values[k++] ?? ''),
    )
  } while (k < values.length && /%[^%]/.test(format))
  return out
}

/** What `echo`/`printf` with literal words, or `cat` fed a heredoc, writes to its output; undefined when unknown. */
export function writtenContent(cmd: SimpleCommand | undefined, stdin: string | undefined): string | undefined {
  if (cmd?.name === 'cat' && cmd.args.length === 0) return stdin
  const text = printed(cmd)
  return text === undefined ? undefined : cmd?.name === 'echo' ? `${text}\n` : text
}

/** A crontab's commands: each line after its five time fields (or `@reboot`…); undefined when a line does not read as one. */
function cronCommands(text: string): string | undefined {
  const out: string[] = []
  for (const line of text.split('\n')) {
    if (/^\s*(#|$)/.test(line) || /^\s*[A-Za-z_]\w*\s*=/.test(line)) continue
    const m = /^\s*(?:@\w+|(?:\S+\s+){5})([\s\S]*)$/.exec(line)
    if (!m) return undefined
    out.push(m[1]!)
  }
  return out.join('\n')
}

/** A Makefile's recipes as one script (`$$` is `$`); undefined when make would run more than recipes (`$(shell …)`, `include`). */
function makeRecipes(text: string): string | undefined {
  if (/\$[({]shell\b/.test(text) || /^\s*-?s?include\b/m.test(text)) return undefined
  return text
    .split('\n')
    .filter((l) => l.startsWith('\t'))
    .map((l) =>
      l
        .slice(1)
        .replace(/^[@+-]+/, '')
        .replace(/\$\$/g, '$'),
    )
    .join('\n')
}

/**
 * A program file written earlier in the same command line, read back when
 * `cmd` runs it: a shell script (`sh x.sh`, `. x.sh`, `at -f`), interpreter
 * code (by the runner, or by the `#!` line for `./x`), a Makefile's recipes,
 * a crontab's commands. What cannot be read that way marks `cmd` instead.
 */
export function runFile(cmd: SimpleCommand, text: string, nest: Nesting): SimpleCommand[] {
  const wd = wdOf(cmd.wd)
  const bang = /^#!\s*(\S+)(?:[ \t]+(\S+))?/.exec(text)
  const runner = cmd.path
    ? bang
      ? basename(bang[1]!) === 'env'
        ? (bang[2] ?? '')
        : basename(bang[1]!)
      : 'sh'
    : cmd.name
  const script =
    runner === 'make' || runner === 'gmake'
      ? makeRecipes(text)
      : runner === 'crontab'
        ? cronCommands(text)
        : SHELLS.has(runner) || ['source', '.', 'at', 'batch'].includes(runner)
          ? text
          : undefined
  if (script !== undefined) return nest.script(script, { pipedFrom: [], wd })
  const lang = languageOf(runner)
  if (!lang || lang === 'awk' || lang === 'sed') {
    cmd.runsWritten = true
    return []
  }
  const place: Place = { pipedFrom: [], writesTo: [], source: cmd.source, wd }
  const calls = shellCalls(lang, text)
  if (calls.dynamic) cmd.runsWritten = true
  return calls.inner.flatMap((inner) =>
    'words' in inner ? nest.expand(inner.words, place) : nest.script(inner.script, { pipedFrom: [], wd }),
  )
}
