import { asScript, literal, type Inner, type Runner, type Word } from './shell-words.js'

/**
 * Programs whose options or settings name a command they run: git's
 * command-valued settings (`-c core.pager=…`, `-c alias.x='!…'`), tar's
 * `--to-command` and checkpoint actions, zip's `-TT`, vim's `-c ':!…'`,
 * rsync's `-e`, `coproc`, `alias`. The command is judged as a script; one
 * held in an expansion is a command no one can read (`dynamic-command`).
 */

/** A command given as a shell string: its script, or, when an expansion, an unknown command. */
const shellString = (w: Word, text = asScript(w)): Inner => (w.dynamic && !w.values ? { words: [w] } : { script: text })
const unknown = (text: string): Inner => ({ words: [{ text, dynamic: true, inner: [] }] })
/** An option's value: attached with `=` or the next word. */
function valueAt(words: readonly Word[], i: number, name: string): Word | undefined {
  const t = words[i]!.text
  if (t.startsWith(`${name}=`)) return { ...words[i]!, text: t.slice(name.length + 1) }
  return t === name ? words[i + 1] : undefined
}

/** git settings whose value is a command line (a `!` alias, a pager, an editor, a hook, a helper…). */
const GIT_COMMAND =
  /^(core\.(pager|editor|sshcommand|fsmonitor|askpass|gitproxy)|pager\..+|sequence\.editor|diff\.external|diff\..+\.(command|textconv)|merge\..+\.driver|filter\..+\.(clean|smudge|process)|credential(\..+)?\.helper|gpg(\..+)?\.program|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack|vcs)|interactive\.difffilter|(web|browser\..+|man\..+|mergetool\..+|difftool\..+)\.(browser|cmd|path)|alias\..+)$/i
/** git settings that point at programs the guard cannot read (a folder of hooks). */
const GIT_OPAQUE = /^core\.hookspath$/i

function gitSetting(setting: Word): Inner | undefined {
  const eq = setting.text.indexOf('=')
  const key = eq === -1 ? setting.text : setting.text.slice(0, eq)
  if (GIT_OPAQUE.test(key)) return unknown(setting.text)
  if (!GIT_COMMAND.test(key.replace(/^["']/, ''))) return undefined
  if (setting.dynamic) return unknown(setting.text)
  const value = setting.text.slice(eq + 1)
  if (/^alias\./i.test(key)) return value.startsWith('!') ? { script: value.slice(1) } : undefined
  if (/^core\.fsmonitor$/i.test(key) && /^(true|false|yes|no|on|off|1|0|)$/i.test(value)) return undefined
  if (/credential/i.test(key) && !value.startsWith('!'))
    return value.startsWith('/') || value.startsWith('.') ? { words: [literal(value)] } : undefined
  return { script: value.replace(/^!/, '') }
}

/** `git -c KEY=CMD …`, `git submodule foreach CMD`, `git rebase --exec CMD`, `git bisect run CMD`. */
const git: Runner = (words) => {
  const inner: Inner[] = []
  let i = 1
  for (; i < words.length; i++) {
    const t = words[i]!.text
    if (t === '-c' && words[i + 1]) {
      const found = gitSetting(words[++i]!)
      if (found) inner.push(found)
    } else if (t.startsWith('-c') && t.length > 2 && !t.startsWith('--')) {
      const found = gitSetting({ ...words[i]!, text: t.slice(2) })
      if (found) inner.push(found)
    } else if (t === '--config-env' || t.startsWith('--config-env=')) {
      // `--config-env=core.pager=VAR`: a command-valued setting read from the environment is unknown.
      const setting = t === '--config-env' ? words[++i] : { ...words[i]!, text: t.slice(13) }
      const key = setting?.text.split('=')[0] ?? ''
      if (GIT_COMMAND.test(key) || GIT_OPAQUE.test(key)) inner.push(unknown(t))
    } else if (t === '-C') i++
    else if (words[i]!.dynamic || !t.startsWith('-')) break
  }
  const sub = words[i]?.text
  const rest = words.slice(i + 1)
  if (sub === 'submodule' && rest[0]?.text === 'foreach') {
    const cmd = rest.slice(1).filter((w) => w.dynamic || !w.text.startsWith('--'))
    if (cmd.length > 0) inner.push(cmd.length === 1 ? shellString(cmd[0]!) : { script: cmd.map(asScript).join(' ') })
  }
  if (sub === 'rebase')
    rest.forEach(
      (w, k) => (w.text === '-x' || w.text === '--exec') && rest[k + 1] && inner.push(shellString(rest[k + 1]!)),
    )
  for (const w of rest) if (w.text.startsWith('--exec=')) inner.push({ script: w.text.slice(7) })
  if (sub === 'bisect' && rest[0]?.text === 'run' && rest.length > 1) inner.push({ words: rest.slice(1) })
  return { keep: true, inner }
}

/** tar options whose value is a command: `--to-command`, `--checkpoint-action=exec=`, `-I`, `--info-script`… */
const TAR_COMMANDS = [
  '--to-command',
  '--use-compress-program',
  '--info-script',
  '--new-volume-script',
  '--rsh-command',
  '-I',
  '-F',
]
const tar: Runner = (words) => {
  const inner: Inner[] = []
  for (let i = 1; i < words.length; i++) {
    for (const name of TAR_COMMANDS) {
      const v = valueAt(words, i, name)
      if (v) inner.push(shellString(v))
    }
    const action = valueAt(words, i, '--checkpoint-action')
    const m = action && /^(?:exec|shell)=([\s\S]*)$/.exec(action.text)
    if (action?.dynamic && !action.values) inner.push(unknown(action.text))
    else if (m) inner.push({ script: m[1]! })
  }
  return { keep: true, inner }
}

/** `zip -TT CMD` / `--unzip-command CMD`: the command tests the archive. */
const zip: Runner = (words) => {
  const inner: Inner[] = []
  for (let i = 1; i < words.length; i++)
    for (const name of ['-TT', '--unzip-command']) {
      const v = valueAt(words, i, name)
      if (v) inner.push(shellString(v))
    }
  return { keep: true, inner }
}

/** An ex command that runs a shell: `:!cmd`, `:%!cmd`, `:r !cmd`, `:w !cmd`; other ways (`system()`, `:terminal`) cannot be read. */
const EX_BANG = /^\s*:*\s*[\d.,$%'<>+-]*\s*(?:(?:r|re|rea|read|w|wr|wri|writ|write)\s+)?!([\s\S]*)$/
const EX_HIDDEN =
  /\b(system|systemlist|termopen|jobstart|term|terminal|sh|shell|py|python3?|pyx|lua|perl|ruby|exe|execute|source|so|luafile|pyfile|make|grep)\b/
function exCommand(text: string): Inner | undefined {
  const segs = text.split('|')
  for (let k = 0; k < segs.length; k++) {
    const m = EX_BANG.exec(segs[k]!)
    if (m) return { script: [m[1]!, ...segs.slice(k + 1)].join('|') }
    if (EX_HIDDEN.test(segs[k]!)) return unknown(text)
  }
  return undefined
}

/** `vim -c CMD`, `vim --cmd CMD`, `vi +CMD`: ex commands run at start. */
const vim: Runner = (words) => {
  const inner: Inner[] = []
  for (let i = 1; i < words.length; i++) {
    const w = words[i]!
    const cmd =
      w.text === '-c' || w.text === '--cmd'
        ? words[++i]
        : w.text.startsWith('+') && !/^\+\d*$/.test(w.text)
          ? { ...w, text: w.text.slice(1) }
          : undefined
    if (!cmd) continue
    const found = cmd.dynamic && !cmd.values ? unknown(cmd.text) : exCommand(asScript(cmd))
    if (found) inner.push(found)
  }
  return { keep: true, inner }
}

/** `rsync -e CMD` / `--rsh=CMD`: the remote shell runs here. */
const rsync: Runner = (words) => {
  const inner: Inner[] = []
  for (let i = 1; i < words.length; i++)
    for (const name of ['-e', '--rsh']) {
      const v = valueAt(words, i, name)
      if (v) inner.push(shellString(v))
    }
  return { keep: true, inner }
}

/** `coproc [NAME] { …; }`, `coproc CMD ARGS`: the command runs in the background. */
const coproc: Runner = (words) => {
  const brace = words.findIndex((w, k) => k <= 2 && w.text === '{')
  const rest = words.slice(brace === -1 ? 1 : brace + 1)
  return { keep: false, inner: rest.length > 0 ? [{ words: rest }] : [] }
}

/** `alias NAME='CMD'`: the alias runs when its name is used; its command is judged where it is defined. */
const alias: Runner = (words) => ({
  keep: false,
  inner: words.slice(1).flatMap((w): Inner[] => {
    const eq = w.text.indexOf('=')
    if (eq <= 0) return []
    return [w.dynamic && !w.values ? unknown(w.text) : { script: w.text.slice(eq + 1) }]
  }),
})

/** `npx [opts] CMD ARGS`, `npx -c 'CMD'`, `npm exec -- CMD`, `bunx CMD`: a package's program, or a shell string. */
const npx: Runner = (words) => {
  const inner: Inner[] = []
  let i = words[0]?.text === 'npm' ? 2 : 1
  if (words[0]?.text === 'npm' && !['exec', 'x'].includes(words[1]?.text ?? '')) return { keep: true, inner }
  for (; i < words.length; i++) {
    const t = words[i]!.text
    if (words[i]!.dynamic || !t.startsWith('-')) break
    const call = valueAt(words, i, '-c') ?? valueAt(words, i, '--call')
    if (call) inner.push(shellString(call))
    if (['-c', '--call', '-p', '--package', '-w', '--workspace'].includes(t)) i++
    if (t === '--') {
      i++
      break
    }
  }
  if (i < words.length) inner.push({ words: words.slice(i) })
  return { keep: false, inner }
}

/** `man -P PAGER`, `scp -S PROGRAM`, `scp -o ProxyCommand=…`: commands named by an option. */
const man: Runner = (words) => ({
  keep: true,
  inner: words.flatMap((_, i) =>
    [valueAt(words, i, '-P'), valueAt(words, i, '--pager'), valueAt(words, i, '-H')]
      .filter((v): v is Word => v !== undefined)
      .map((v) => shellString(v)),
  ),
})
const scp: Runner = (words) => {
  const inner: Inner[] = []
  for (let i = 1; i < words.length; i++) {
    const program = valueAt(words, i, '-S')
    if (program) inner.push({ words: [program] })
    const o = valueAt(words, i, '-o')
    const m = o && /^\s*(ProxyCommand|LocalCommand)\s*[= ]\s*([\s\S]*)$/i.exec(asScript(o))
    if (m && m[2]!.toLowerCase() !== 'none') inner.push({ script: m[2]! })
  }
  return { keep: true, inner }
}

const VIMS = ['vi', 'vim', 'nvim', 'gvim', 'view', 'vimdiff', 'rvim', 'ex', 'nex', 'evim']
export const OPTION_RUNNERS: Readonly<Record<string, Runner>> = {
  git,
  tar,
  gtar: tar,
  bsdtar: tar,
  zip,
  rsync,
  coproc,
  alias,
  npx,
  bunx: npx,
  npm: npx,
  man,
  scp,
  ...Object.fromEntries(VIMS.map((v) => [v, vim])),
}

/** Environment variables whose value is a command run later (a pager, an editor, git's ssh, less's preprocessor). */
const ENV_COMMANDS = new Set([
  'PAGER',
  'GIT_PAGER',
  'MANPAGER',
  'SYSTEMD_PAGER',
  'EDITOR',
  'VISUAL',
  'GIT_EDITOR',
  'GIT_SEQUENCE_EDITOR',
  'GIT_SSH_COMMAND',
  'GIT_SSH',
  'GIT_EXTERNAL_DIFF',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'LESSOPEN',
  'LESSCLOSE',
  'PROMPT_COMMAND',
  'RSYNC_RSH',
  'BROWSER',
])
/** Environment variables that make a program load code the guard cannot read. */
const ENV_LOADS = new Set([
  'LD_PRELOAD',
  'LD_AUDIT',
  'BASH_ENV',
  'ENV',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_EXEC_PATH',
])

/** What setting an environment variable runs: its value as a command, or an unreadable program. */
export function envCommand(name: string, value: Word): Inner | undefined {
  if (
    ENV_LOADS.has(name) ||
    (name === 'NODE_OPTIONS' && /(^|\s)(-r|--require|--import|--loader|--experimental-loader)\b/.test(value.text))
  )
    return value.text.trim() === '' ? undefined : unknown(`$${name}`)
  // `GIT_CONFIG_VALUE_0='…'` (with `GIT_CONFIG_KEY_0=core.pager`): a setting's value may be a command.
  if ((!ENV_COMMANDS.has(name) && !/^GIT_CONFIG_VALUE_\d+$/.test(name)) || value.text.trim() === '') return undefined
  return shellString(value, asScript(value).replace(/^\s*\|+/, ''))
}
