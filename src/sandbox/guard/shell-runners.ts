import { hasOption, optionValue, scanOptions, type OptionSpec } from './options.js'
import { prefix } from './wrappers.js'
import { asScript, basename, joinQuoted, literal, SHELLS, type Inner, type Runner, type Word } from './shell-words.js'

/** Words a runner joins with spaces into one shell string (`ssh host rm -rf /`, `watch make`). */
const joined = (words: readonly Word[]): string => words.map(asScript).join(' ')
const script = (text: string): Inner => ({ script: text })
const shellWords = (shell: string, ...rest: Word[]): Inner => ({ words: [literal(shell), ...rest] })

/** `sh [opts] -c SCRIPT [$0 $1 …]`, `bash -lc`, `fish --command=…`: the string is a script; later words are its positional parameters. */
const shell: Runner = (words) => {
  let c = false
  let code: Word | undefined
  let i = 1
  for (; i < words.length; i++) {
    const w = words[i]!
    const t = w.text
    if (w.dynamic) break
    if (t === '--' || t === '-') {
      i++
      break
    }
    if (t === '--command' || t === '--rcfile' || t === '--init-file' || /^[-+][oO]$/.test(t)) {
      if (t === '--command') code = words[i + 1]
      i++
      continue
    }
    if (t.startsWith('--command=')) code = literal(t.slice(10))
    else if (/^-[a-zA-Z]+$/.test(t) && t.includes('c')) c = true
    else if (!/^(--|[-+])[a-zA-Z-]+$/.test(t)) break
  }
  if (code) return { keep: true, inner: [{ script: asScript(code), positional: words.slice(i) }] }
  const text = words[i]
  if (!c || !text) return { keep: true, inner: [] }
  return { keep: true, inner: [{ script: asScript(text), positional: words.slice(i + 1) }] }
}

/** `su [-] [USER] -c CMD [args]`, `su -s SHELL`: the command runs in the user's shell. */
const SU: OptionSpec = {
  short: 'cgGsw',
  long: ['--command', '--session-command', '--shell', '--group', '--supp-group', '--whitelist-environment'],
  permute: true,
}
function suLike(words: Word[], spec: OptionSpec): Inner[] {
  const s = scanOptions(words, 1, spec)
  const sh = basename(optionValue(s, ['-s', '--shell'])?.text ?? 'sh')
  const ops = s.operands.filter((w) => w.dynamic || w.text !== '-')
  const cmd = optionValue(s, ['-c', '--command', '--session-command'])
  if (cmd) return [shellWords(sh, literal('-c'), cmd, ...ops.slice(1))]
  return [shellWords(sh, ...ops.slice(1))]
}

/** `runuser -u USER [--] CMD` runs CMD; without `-u` it is su. */
const runuser: Runner = (words) => {
  const s = scanOptions(words, 1, {
    short: 'ugGsc',
    long: ['--user', '--group', '--supp-group', '--shell', '--command', '--session-command', '--whitelist-environment'],
  })
  if (hasOption(s, ['-u', '--user']))
    return { keep: false, inner: s.operands.length > 0 ? [{ words: s.operands }] : [] }
  return { keep: false, inner: suLike(words, SU) }
}

/** `sg [-] GROUP [-c] CMD`: CMD is a string for /bin/sh. */
const sg: Runner = (words) => {
  const ops = words.slice(1).filter((w, i) => !(i === 0 && w.text === '-'))
  const rest = ops.slice(1).filter((w, i) => !(i === 0 && w.text === '-c'))
  return { keep: false, inner: [rest.length > 0 ? script(joined(rest)) : shellWords('sh')] }
}

/** `script -c CMD`, and the BSD form `script [-q] FILE CMD ARGS…`. */
const SCRIPT: OptionSpec = {
  short: 'cEIOBTmoF',
  attached: 't',
  long: [
    '--command',
    '--echo',
    '--log-in',
    '--log-out',
    '--log-io',
    '--log-timing',
    '--logging-format',
    '--output-limit',
  ],
}
const scriptRecorder: Runner = (words) => {
  const cmd = optionValue(scanOptions(words, 1, { ...SCRIPT, permute: true }), ['-c', '--command'])
  if (cmd) return { keep: false, inner: [script(asScript(cmd))] }
  // BSD: the words after the file are the command, options and all.
  const rest = words.slice(scanOptions(words, 1, SCRIPT).rest + 1)
  return { keep: false, inner: rest.length > 0 ? [{ words: rest }] : [] }
}

/** `ssh [opts] HOST CMD…`: the words are joined and run by the remote shell; `-o ProxyCommand=…` runs here. */
const SSH: OptionSpec = { short: 'BbcDEeFIiJLlmOopQRSWw' }
const ssh: Runner = (words) => {
  const s = scanOptions(words, 1, SSH)
  const inner: Inner[] = []
  for (const o of s.options) {
    const m =
      o.name === '-o' && o.value
        ? /^\s*(ProxyCommand|LocalCommand|KnownHostsCommand)\s*[= ]\s*([\s\S]*)$/i.exec(asScript(o.value))
        : null
    if (m && m[2]!.toLowerCase() !== 'none') inner.push(script(m[2]!))
  }
  // Options may follow the host too.
  const remote = words.slice(scanOptions(words, s.rest + 1, SSH).rest)
  // With no command the remote shell reads its program from stdin.
  inner.push(remote.length > 0 ? script(joined(remote)) : shellWords('sh'))
  return { keep: false, inner }
}

/** `watch [opts] CMD…`: joined into a string for `sh -c` (with `-x`, run as words). */
const watch: Runner = (words) => {
  const s = scanOptions(words, 1, { short: 'nq', attached: 'd', long: ['--interval', '--equexit'] })
  const cmd = words.slice(s.rest)
  if (cmd.length === 0) return { keep: false, inner: [] }
  return { keep: false, inner: [hasOption(s, ['-x', '--exec']) ? { words: cmd } : script(joined(cmd))] }
}

/** `env [-i] [-u VAR] [VAR=val…] CMD`, and `env -S 'CMD ARGS'` (a string split into words). */
const env: Runner = (words) => {
  const s = scanOptions(words, 1, { short: 'uCSP', long: ['--unset', '--chdir', '--split-string'] })
  let i = s.rest
  while (i < words.length && !words[i]!.dynamic && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!.text)) i++
  const split = optionValue(s, ['-S', '--split-string'])
  const rest = words.slice(i)
  if (split) return { keep: false, inner: [script(`${asScript(split)} ${joinQuoted(rest)}`)] }
  return { keep: false, inner: rest.length > 0 ? [{ words: rest }] : [] }
}

/** `perf record|stat|trace [opts] [--] CMD`. */
const PERF_RUNS = new Set(['record', 'stat', 'trace', 'ftrace'])
const perf: Runner = (words) => {
  let i = 1
  while (i < words.length && words[i]!.text.startsWith('-')) i++
  if (
    ['c2c', 'mem', 'lock', 'sched', 'kmem', 'kwork', 'kvm'].includes(words[i]?.text ?? '') &&
    words[i + 1]?.text === 'record'
  )
    i++
  if (!PERF_RUNS.has(words[i]?.text ?? '')) return { keep: false, inner: [] }
  return prefix(
    {
      short: 'ecoCFmptGuDrxIjLS',
      long: [
        '--event',
        '--output',
        '--pid',
        '--tid',
        '--cpu',
        '--freq',
        '--mmap-pages',
        '--cgroup',
        '--uid',
        '--delay',
        '--repeat',
        '--field-separator',
        '--interval-print',
        '--call-graph',
        '--filter',
        '--pre',
        '--post',
      ],
    },
    0,
    i + 1,
  )(words)
}

/** `gdb [opts] --args CMD ARGS`; `-ex 'shell CMD'` / `-ex '!CMD'` runs a shell command. */
const gdb: Runner = (words) => {
  const inner: Inner[] = []
  for (let i = 1; i < words.length; i++) {
    const t = words[i]!.text
    if (t === '--args') {
      if (i + 1 < words.length) inner.push({ words: words.slice(i + 1) })
      break
    }
    if (['-ex', '--ex', '-iex', '-eval-command', '--eval-command', '-init-eval-command'].includes(t) && words[i + 1]) {
      const m = /^\s*(?:shell\s+|!|pipe\s+[^|]*\|)([\s\S]*)$/.exec(asScript(words[i + 1]!))
      if (m) inner.push(script(m[1]!))
      i++
    }
  }
  return { keep: false, inner }
}

/** `machinectl [opts] shell [opts] [USER@]MACHINE [CMD ARGS]`. */
const machinectl: Runner = (words) => {
  const spec: OptionSpec = { short: 'MHEp', long: ['--machine', '--host', '--setenv', '--uid', '--property'] }
  const at = scanOptions(words, 1, spec).rest
  if (words[at]?.text !== 'shell') return { keep: false, inner: [] }
  // After the machine, the command's words as they are.
  const cmd = words.slice(scanOptions(words, at + 1, spec).rest + 1)
  return { keep: false, inner: cmd.length > 0 ? [{ words: cmd }] : [] }
}

/** `flock [opts] FILE -c CMD` or `flock [opts] FILE CMD ARGS`. */
const flock: Runner = (words) => {
  const s = scanOptions(words, 1, { short: 'wEc', long: ['--timeout', '--wait', '--conflict-exit-code', '--command'] })
  const cmd = optionValue(s, ['-c', '--command'])
  if (cmd) return { keep: false, inner: [script(asScript(cmd))] }
  const after = scanOptions(words, s.rest + 1, {
    short: 'wEc',
    long: ['--timeout', '--wait', '--conflict-exit-code', '--command'],
  })
  const c2 = optionValue(after, ['-c', '--command'])
  if (c2) return { keep: false, inner: [script(asScript(c2))] }
  const rest = words.slice(after.rest)
  return { keep: false, inner: rest.length > 0 ? [{ words: rest }] : [] }
}

/** `entr [-acdnprsz] CMD ARGS`; with `-s` the command is a shell string. */
const entr: Runner = (words) => {
  const s = scanOptions(words, 1)
  const cmd = words.slice(s.rest)
  if (cmd.length === 0) return { keep: false, inner: [] }
  return { keep: false, inner: [hasOption(s, ['-s']) ? script(asScript(cmd[0]!)) : { words: cmd }] }
}

/** `tmux new-session|new-window|split-window|respawn-*|run-shell|display-popup [opts] [SHELL-COMMAND]`. */
const TMUX_RUNS = new Set([
  'new-session',
  'new',
  'new-window',
  'neww',
  'split-window',
  'splitw',
  'respawn-pane',
  'respawnp',
  'respawn-window',
  'respawnw',
  'run-shell',
  'run',
  'display-popup',
  'popup',
  'pipe-pane',
  'pipep',
])
const tmux: Runner = (words) => {
  const top = scanOptions(words, 1, { short: 'LSfcT' })
  // `tmux -c CMD` runs CMD with the shell, like `sh -c`.
  const direct = optionValue(top, ['-c'])
  if (direct) return { keep: false, inner: [script(asScript(direct))] }
  if (!TMUX_RUNS.has(words[top.rest]?.text ?? '')) return { keep: false, inner: [] }
  const cmd = words.slice(scanOptions(words, top.rest + 1, { short: 'cefFnstxylST' }).rest)
  return { keep: false, inner: cmd.length > 0 ? [script(joined(cmd))] : [] }
}

/** `screen [opts] CMD ARGS`. */
const screen = prefix({ short: 'cehpStTX', dashLong: ['-Logfile'] })

/** `nix-shell --run|--command CMD`, `nix develop|shell … -c|--command CMD ARGS`. */
const nixShell: Runner = (words) => {
  const s = scanOptions(words, 1, {
    short: 'pAIE',
    long: ['--run', '--command', '--packages', '--attr', '--arg', '--argstr', '--include', '--expr'],
    arity: { '--arg': 2, '--argstr': 2 },
    permute: true,
  })
  const cmd = optionValue(s, ['--run', '--command'])
  return { keep: false, inner: cmd ? [script(asScript(cmd))] : [] }
}
const nix: Runner = (words) => {
  const i = words.findIndex((w, j) => j > 1 && !w.dynamic && (w.text === '-c' || w.text === '--command'))
  if (!['develop', 'shell'].includes(words[1]?.text ?? '') || i === -1 || i === words.length - 1)
    return { keep: false, inner: [] }
  return { keep: false, inner: [{ words: words.slice(i + 1) }] }
}

/** Shell strings run later or elsewhere: `eval ARGS`, `trap CMD SIG`. */
const evalRunner: Runner = (words) => ({
  keep: true,
  inner: [
    script(
      words
        .slice(1)
        .map((w) => w.text)
        .join(' '),
    ),
  ],
})
const trap: Runner = (words) => {
  const arg = words[1]
  if (!arg || words.length < 3 || (!arg.dynamic && (arg.text === '-' || arg.text.startsWith('-'))))
    return { keep: false, inner: [] }
  return { keep: false, inner: [script(asScript(arg))] }
}

/** Commands that start a shell reading its program from stdin. */
const stdinShell: Runner = () => ({ keep: false, inner: [shellWords('sh')] })

/** Runners whose command is a shell string, or that hand their words to a shell. */
export const SHELL_RUNNERS: Readonly<Record<string, Runner>> = {
  ...Object.fromEntries([...SHELLS].filter((s) => s !== 'busybox').map((s) => [s, shell])),
  su: (words) => ({ keep: false, inner: suLike(words, SU) }),
  runuser,
  sg,
  newgrp: stdinShell,
  // `at -f FILE` stays judged itself: FILE is a program (see write-then-run.ts).
  at: (words) =>
    words.some((w) => w.text === '-f' || w.text.startsWith('-l') || w.text === '-r' || w.text === '-d')
      ? { keep: true, inner: [] }
      : stdinShell(words),
  batch: stdinShell,
  script: scriptRecorder,
  asciinema: (words) => {
    const s = scanOptions(words, 2, {
      short: 'ctiI',
      long: ['--command', '--title', '--idle-time-limit', '--input', '--cols', '--rows', '--env', '--format'],
      permute: true,
    })
    const cmd = words[1]?.text === 'rec' ? optionValue(s, ['-c', '--command']) : undefined
    return { keep: false, inner: cmd ? [script(asScript(cmd))] : [] }
  },
  ssh,
  watch,
  env,
  perf,
  gdb,
  machinectl,
  flock,
  entr,
  tmux,
  screen,
  'nix-shell': nixShell,
  nix,
  eval: evalRunner,
  trap,
}
