import { scanOptions, type OptionSpec } from './options.js'
import type { Runner } from './shell-words.js'

/**
 * A wrapper whose command follows its options and `positional` fixed
 * operands (`timeout 5 CMD`, `taskset MASK CMD`): the wrapper vanishes and
 * the command is judged in its place.
 */
export function prefix(spec: OptionSpec = {}, positional = 0, skip = 1): Runner {
  return (words) => {
    const s = scanOptions(words, skip, spec)
    const cmd = words.slice(s.rest + positional)
    return { keep: false, inner: cmd.length > 0 ? [{ words: cmd }] : [] }
  }
}

/** `uv run CMD`, `bundle exec CMD`: a prefix wrapper behind a subcommand. */
function sub(names: readonly string[], spec: OptionSpec = {}, positional = 0): Runner {
  const run = prefix(spec, positional, 2)
  return (words) => (names.includes(words[1]?.text ?? '') && !words[1]!.dynamic ? run(words) : undefined)
}

const SUDO: OptionSpec = {
  short: 'aCcDghpRrTtUu',
  long: [
    '--user',
    '--group',
    '--host',
    '--prompt',
    '--chdir',
    '--chroot',
    '--role',
    '--type',
    '--other-user',
    '--close-from',
    '--command-timeout',
    '--login-class',
  ],
}
const SYSTEMD_RUN: OptionSpec = {
  short: 'upEMHD',
  long: [
    '--unit',
    '--property',
    '--setenv',
    '--machine',
    '--host',
    '--description',
    '--slice',
    '--uid',
    '--gid',
    '--nice',
    '--working-directory',
    '--on-active',
    '--on-boot',
    '--on-startup',
    '--on-unit-active',
    '--on-unit-inactive',
    '--on-calendar',
    '--timer-property',
    '--path-property',
    '--socket-property',
    '--service-type',
    '--capsule',
    '--background',
  ],
}
const BWRAP_ONE = [
  '--args',
  '--argv0',
  '--chdir',
  '--dev',
  '--dir',
  '--exec-label',
  '--file-label',
  '--hostname',
  '--info-fd',
  '--json-status-fd',
  '--lock-file',
  '--mqueue',
  '--perms',
  '--proc',
  '--remount-ro',
  '--seccomp',
  '--size',
  '--sync-fd',
  '--tmpfs',
  '--uid',
  '--gid',
  '--unsetenv',
  '--userns',
  '--userns2',
  '--pidns',
  '--cap-add',
  '--cap-drop',
  '--block-fd',
  '--userns-block-fd',
  '--overlay-src',
  '--tmp-overlay',
  '--ro-overlay',
  '--add-seccomp-fd',
  '--level-prefix',
]
const BWRAP_TWO = [
  '--bind',
  '--bind-try',
  '--ro-bind',
  '--ro-bind-try',
  '--dev-bind',
  '--dev-bind-try',
  '--symlink',
  '--setenv',
  '--file',
  '--bind-data',
  '--ro-bind-data',
  '--chmod',
  '--bind-fd',
  '--ro-bind-fd',
]

/**
 * Wrappers that run the command after their options, by name, with the
 * options that take a value (the rest are flags). Privilege tools, tracers,
 * schedulers, namespace and resource tools, proxies, environment runners.
 */
export const WRAPPERS: Readonly<Record<string, Runner>> = {
  // privilege
  sudo: prefix(SUDO),
  doas: prefix({ short: 'uC' }),
  pkexec: prefix({ long: ['--user'] }),
  run0: prefix({
    short: 'ugD',
    long: [
      '--user',
      '--group',
      '--nice',
      '--chdir',
      '--setenv',
      '--property',
      '--unit',
      '--description',
      '--slice',
      '--machine',
      '--background',
    ],
  }),
  'systemd-run': prefix(SYSTEMD_RUN),
  chpst: prefix({ short: 'uUbe/nlLmdofcprt' }),
  setpriv: prefix({
    long: [
      '--reuid',
      '--regid',
      '--ruid',
      '--euid',
      '--rgid',
      '--egid',
      '--groups',
      '--inh-caps',
      '--ambient-caps',
      '--bounding-set',
      '--securebits',
      '--pdeathsig',
      '--selinux-label',
      '--apparmor-profile',
      '--landlock-access',
      '--landlock-rule',
    ],
  }),
  gosu: prefix({}, 1),
  'su-exec': prefix({}, 1),
  setuidgid: prefix({}, 1),
  's6-setuidgid': prefix({}, 1),
  fakeroot: prefix({ short: 'lisb', long: ['--lib', '--faked'] }),
  fakechroot: prefix({ short: 'lsecd', long: ['--lib', '--config-dir', '--environment', '--bindir'] }),
  // namespaces, containers of the host's own processes
  unshare: prefix({
    short: 'SGRw',
    attached: 'muinpUCTl',
    long: [
      '--setuid',
      '--setgid',
      '--root',
      '--wd',
      '--propagation',
      '--setgroups',
      '--map-user',
      '--map-group',
      '--map-users',
      '--map-groups',
      '--monotonic',
      '--boottime',
    ],
  }),
  nsenter: prefix({ short: 'tSGe', attached: 'muinpUCTrwZ', long: ['--target', '--setuid', '--setgid', '--env'] }),
  chroot: prefix({ long: ['--userspec', '--groups'] }, 1),
  firejail: prefix(),
  proot: prefix({
    short: 'rbqwvkiRSmp',
    long: ['--rootfs', '--bind', '--mount', '--qemu', '--cwd', '--verbose', '--kernel-release', '--change-id'],
  }),
  bwrap: prefix({ long: BWRAP_ONE, arity: { ...Object.fromEntries(BWRAP_TWO.map((o) => [o, 2])), '--overlay': 3 } }),
  capsh: (words) => {
    // Everything after `--` goes to /bin/bash (or `--shell=`).
    const i = words.findIndex((w) => !w.dynamic && w.text === '--')
    if (i === -1) return { keep: false, inner: [] }
    const shell =
      words
        .slice(1, i)
        .find((w) => w.text.startsWith('--shell='))
        ?.text.slice(8) ?? 'bash'
    return { keep: false, inner: [{ words: [{ text: shell, dynamic: false, inner: [] }, ...words.slice(i + 1)] }] }
  },
  // tracers and debuggers
  strace: prefix({
    short: 'abeEIoOpPsSuUX',
    long: [
      '--output',
      '--trace',
      '--signal',
      '--status',
      '--attach',
      '--user',
      '--env',
      '--string-limit',
      '--summary-sort-by',
      '--columns',
      '--trace-path',
      '--abbrev',
      '--verbose',
      '--raw',
      '--read',
      '--write',
      '--fault',
      '--inject',
      '--kvm',
      '--quiet',
      '--decode-fds',
      '--const-print-style',
      '--instruction-pointer',
    ],
  }),
  ltrace: prefix({ short: 'aADeFlnopsuwx', long: ['--output', '--library', '--align', '--indent', '--config'] }),
  valgrind: prefix(),
  catchsegv: prefix(),
  lldb: (words) => {
    const i = words.findIndex((w) => !w.dynamic && w.text === '--')
    return { keep: false, inner: i === -1 || i === words.length - 1 ? [] : [{ words: words.slice(i + 1) }] }
  },
  // scheduling, resources, buffering, timing
  nice: prefix({ short: 'n', long: ['--adjustment'] }),
  ionice: prefix({ short: 'cnpPu', long: ['--class', '--classdata', '--pid', '--pgid', '--uid'] }),
  chrt: prefix({ short: 'TPD', long: ['--sched-runtime', '--sched-period', '--sched-deadline'] }, 1),
  taskset: prefix({}, 1),
  numactl: prefix({
    short: 'ipmNCPwb',
    long: [
      '--interleave',
      '--preferred',
      '--preferred-many',
      '--membind',
      '--cpunodebind',
      '--physcpubind',
      '--weighted-interleave',
    ],
  }),
  prlimit: prefix({ short: 'po', attached: 'cdefilmnqrstuvxy', long: ['--pid', '--output'] }),
  cpulimit: prefix({ short: 'lpe', long: ['--limit', '--pid', '--exe'] }),
  trickle: prefix({ short: 'udwtlnL' }),
  'systemd-inhibit': prefix({ long: ['--what', '--who', '--why', '--mode'] }),
  caffeinate: prefix({ short: 'tw' }),
  nohup: prefix(),
  setsid: prefix(),
  stdbuf: prefix({ short: 'ioe', long: ['--input', '--output', '--error'] }),
  unbuffer: prefix(),
  nocache: prefix(),
  eatmydata: prefix(),
  time: prefix({ short: 'fo', long: ['--format', '--output'] }),
  timeout: prefix({ short: 'sk', long: ['--signal', '--kill-after'] }, 1),
  faketime: prefix({ short: 'p', long: ['--date-prog'] }, 1),
  cgexec: prefix({ short: 'g' }),
  // network wrappers
  torsocks: prefix({ short: 'upaP', long: ['--user', '--pass', '--address', '--port'] }),
  torify: prefix({ short: 'upaP' }),
  proxychains: prefix({ short: 'f' }),
  proxychains4: prefix({ short: 'f' }),
  sshpass: prefix({ short: 'pfdP' }),
  // process supervisors and session helpers
  tini: prefix({ short: 'pe' }),
  'dumb-init': prefix({ short: 'r', long: ['--rewrite'] }),
  'dbus-run-session': prefix({ long: ['--config-file', '--dbus-daemon'] }),
  'xvfb-run': prefix({
    short: 'nsefpw',
    long: ['--server-num', '--server-args', '--error-file', '--auth-file', '--xauth-protocol', '--wait'],
  }),
  envdir: prefix({}, 1),
  // shell builtins that run their operands
  command: prefix(),
  builtin: prefix(),
  exec: prefix({ short: 'a' }),
  busybox: prefix(),
  toybox: prefix(),
  // project environments
  uv: sub(['run'], {
    short: 'pw',
    long: [
      '--with',
      '--with-requirements',
      '--with-editable',
      '--python',
      '--package',
      '--extra',
      '--group',
      '--only-group',
      '--env-file',
      '--directory',
      '--project',
      '--index',
      '--index-url',
      '--extra-index-url',
      '--default-index',
      '--find-links',
      '--script',
    ],
  }),
  poetry: sub(['run'], { short: 'PC', long: ['--directory', '--project'] }),
  pipenv: sub(['run']),
  bundle: sub(['exec'], { long: ['--gemfile'] }),
  pnpm: sub(['exec'], { short: 'C', long: ['--dir', '--filter'] }),
  conda: sub(['run'], { short: 'np', long: ['--name', '--prefix', '--cwd'] }),
  mamba: sub(['run'], { short: 'np', long: ['--name', '--prefix', '--cwd'] }),
  mise: sub(['exec', 'x'], { short: 'CE', long: ['--cd', '--env', '--jobs'] }),
  direnv: sub(['exec'], {}, 1),
}
