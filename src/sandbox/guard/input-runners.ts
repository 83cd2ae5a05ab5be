import { hasOption, optionValue, scanOptions, type OptionSpec } from './options.js'
import { asScript, INPUT_REF, inputWord, quote, type Inner, type Runner, type Word } from './shell-words.js'

/**
 * Runners whose command gets its arguments from input at run time: xargs and
 * parallel read them from stdin or files, find and fd pass the paths they
 * find. Those arguments become words marked `fromInput`: unknown targets.
 */

/** A word with `repl` replaced by input: the input itself when whole, else unknown text built from it. */
function replaced(w: Word, repl: string, whole: Word): Word {
  if (w.dynamic || !w.text.includes(repl)) return w
  if (w.text === repl) return whole
  return { text: w.text.split(repl).join(INPUT_REF), dynamic: true, inner: w.inner, fromInput: {} }
}

const XARGS: OptionSpec = {
  short: 'adEILnPsJRS',
  attached: 'eil',
  long: ['--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'],
}
/** `xargs [opts] [CMD [ARGS]]`: input words appended, or put where `-I R` says. */
const xargs: Runner = (words) => {
  const s = scanOptions(words, 1, XARGS)
  const cmd = words.slice(s.rest)
  if (cmd.length === 0) return { keep: false, inner: [] }
  const i = s.options.find((o) => ['-I', '-J', '-i', '--replace'].includes(o.name))
  const repl = i ? (i.value?.text ?? '{}') : undefined
  const input = inputWord()
  return { keep: false, inner: [{ words: repl ? cmd.map((w) => replaced(w, repl, input)) : [...cmd, input], input }] }
}

const PARALLEL: OptionSpec = {
  short: 'jPNnLSadCEIs',
  attached: 'il',
  long: [
    '--jobs',
    '--max-procs',
    '--max-args',
    '--max-lines',
    '--sshlogin',
    '--arg-file',
    '--delimiter',
    '--colsep',
    '--joblog',
    '--results',
    '--res',
    '--tmpdir',
    '--workdir',
    '--wd',
    '--timeout',
    '--retries',
    '--halt',
    '--halt-on-error',
    '--delay',
    '--memfree',
    '--memsuspend',
    '--load',
    '--nice',
    '--tag-string',
    '--tagstring',
    '--env',
    '--basefile',
    '--bf',
    '--transferfile',
    '--tf',
    '--return',
    '--sshdelay',
    '--limit',
    '--termseq',
    '--rpl',
    '--ssh',
    '--block',
    '--block-size',
    '--header',
    '--sshloginfile',
    '--slf',
    '--id',
    '--semaphorename',
    '--trc',
    '--max-chars',
    '--seqreplace',
    '--shell-quote',
  ],
}
const SEPARATORS = new Set([':::', '::::', ':::+', '::::+'])
/** The replacement strings of GNU parallel: `{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, `{1}`, `{2.}`… */
const PARALLEL_REPL = /\{(?:\d*(?:\.|\/|\/\/|\/\.)?|#|%)\}/g
const MAX_ARGS = 32

/** `parallel [opts] [CMD] ::: ARGS` or `… < input`: the command is a shell line, arguments replace `{}` or are appended. */
const parallel: Runner = (words) => {
  const s = scanOptions(words, 1, PARALLEL)
  const rest = words.slice(s.rest)
  const sep = rest.findIndex((w) => !w.dynamic && SEPARATORS.has(w.text))
  const cmd = sep === -1 ? rest : rest.slice(0, sep)
  const groups = sep === -1 ? [] : rest.slice(sep)
  const literalArgs =
    groups.length > 0 &&
    !hasOption(s, ['-a', '--arg-file']) &&
    groups.every((w) => !w.dynamic && w.text !== '::::' && w.text !== '::::+')
      ? groups.filter((w) => !SEPARATORS.has(w.text))
      : undefined
  const custom = optionValue(s, ['-I'])?.text
  const line = cmd.map((w) => (hasOption(s, ['-q', '--quote']) ? quote(w.text) : asScript(w))).join(' ')
  const fill = (arg: string): string => {
    const withArg = custom ? line.split(custom).join(arg) : line.replace(PARALLEL_REPL, arg)
    return withArg !== line ? withArg : `${line} ${arg}`
  }
  const input = inputWord()
  let inner: Inner[]
  if (literalArgs)
    inner = literalArgs.slice(0, MAX_ARGS).map((a) => ({ script: cmd.length > 0 ? fill(quote(a.text)) : a.text }))
  else inner = cmd.length > 0 ? [{ script: fill(INPUT_REF), input }] : [{ words: [input] }]
  return { keep: false, inner }
}

/** find's leading options (`-H`, `-L`, `-P`, `-D opts`, `-O3`) and the expression words that start after the roots. */
const startsExpression = (w: Word) =>
  !w.dynamic && (w.text.startsWith('-') || w.text === '(' || w.text === '!' || w.text === ',')
const EXECS = new Set(['-exec', '-execdir', '-ok', '-okdir'])

/** `find ROOTS… EXPR -exec CMD {} ;|+`: `{}` is each path found, so it lies under the roots. */
const find: Runner = (words) => {
  let i = 1
  while (i < words.length && !words[i]!.dynamic && /^-([HLP]|O\d*|D)$/.test(words[i]!.text))
    i += words[i]!.text === '-D' ? 2 : 1
  const roots: Word[] = []
  while (i < words.length && !startsExpression(words[i]!)) roots.push(words[i++]!)
  const within = roots.length === 0 ? ['.'] : roots.every((r) => !r.dynamic) ? roots.map((r) => r.text) : undefined
  const found = inputWord(within)
  const inner: Inner[] = []
  for (; i < words.length; i++) {
    if (words[i]!.dynamic || !EXECS.has(words[i]!.text)) continue
    const cmd: Word[] = []
    for (i++; i < words.length; i++) {
      const w = words[i]!
      if (!w.dynamic && (w.text === ';' || (w.text === '+' && cmd.at(-1) === found))) break
      cmd.push(replaced(w, '{}', found))
    }
    if (cmd.length > 0) inner.push({ words: cmd, input: found })
  }
  return { keep: true, inner }
}

const FD: OptionSpec = {
  short: 'etdEjSoc',
  long: [
    '--extension',
    '--type',
    '--max-depth',
    '--min-depth',
    '--exact-depth',
    '--exclude',
    '--threads',
    '--size',
    '--changed-within',
    '--changed-before',
    '--change-newer-than',
    '--change-older-than',
    '--owner',
    '--base-directory',
    '--path-separator',
    '--search-path',
    '--ignore-file',
    '--color',
    '--max-results',
    '--format',
    '--batch-size',
    '--and',
  ],
  permute: true,
}
const FD_EXEC = new Set(['-x', '--exec', '-X', '--exec-batch'])
const FD_REPL = /\{(?:|\/|\/\/|\.|\/\.)\}/g
const FD_WHOLE = /^\{(?:|\/|\/\/|\.|\/\.)\}$/

/** `fd [opts] [PATTERN] [PATH…] -x|-X CMD…`: the placeholders (or an appended path) are paths under the search roots. */
const fd: Runner = (words) => {
  const at = words.findIndex((w) => !w.dynamic && FD_EXEC.has(w.text))
  if (at === -1) return { keep: true, inner: [] }
  const s = scanOptions(words.slice(0, at), 1, FD)
  const base = optionValue(s, ['--base-directory'])
  const paths = [
    ...s.operands.slice(1),
    ...s.options.filter((o) => o.name === '--search-path' && o.value).map((o) => o.value!),
  ]
  const roots = paths.length > 0 ? paths : base ? [] : [{ text: '.', dynamic: false, inner: [] }]
  const under = (r: Word) => (base && !r.text.startsWith('/') ? `${base.text}/${r.text}` : r.text)
  const within =
    roots.every((r) => !r.dynamic) && !base?.dynamic ? (roots.length > 0 ? roots.map(under) : [base!.text]) : undefined
  const found = inputWord(within)
  const end = words.findIndex((w, j) => j > at && !w.dynamic && w.text === ';')
  const cmd = words.slice(at + 1, end === -1 ? undefined : end)
  if (cmd.length === 0) return { keep: true, inner: [] }
  const filled = cmd.map((w): Word =>
    w.dynamic || w.text.replace(FD_REPL, '') === w.text
      ? w
      : FD_WHOLE.test(w.text)
        ? found
        : { text: w.text.replace(FD_REPL, INPUT_REF), dynamic: true, inner: [], fromInput: {} },
  )
  return { keep: true, inner: [{ words: filled.some((w) => w.fromInput) ? filled : [...filled, found], input: found }] }
}

export const INPUT_RUNNERS: Readonly<Record<string, Runner>> = { xargs, parallel, sem: parallel, find, fd, fdfind: fd }
