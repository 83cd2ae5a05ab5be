import { isCriticalPath, valuesOf } from './paths.js'
import type { GuardRule } from './rule.js'
import { TARGET_RULES } from './rules-targets.js'
import { readsProgramFromStdin, runsComputedShell } from './interpreters.js'
import { basename, INTERPRETERS, unquote, type SimpleCommand, type Word } from './shell-words.js'

/** A guard rule: an id, the message a blocked user reads, and the test. */
export type { GuardRule } from './rule.js'

const texts = (args: Word[]) => args.filter((a) => !a.dynamic).map((a) => a.text)
/** Whether short or long flags contain one of the letters/names (`-rf`, `-Rf`, `--recursive`). */
function hasFlag(args: Word[], letters: string, long: string[]): boolean {
  return texts(args).some((a) =>
    a.startsWith('--') ? long.includes(a) : a.startsWith('-') && [...a.slice(1)].some((c) => letters.includes(c)),
  )
}
const operands = (args: Word[]) => args.filter((a) => a.dynamic || !a.text.startsWith('-'))

const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'xh', 'nc', 'ncat'])
function isSource(cmd: SimpleCommand): boolean {
  if (DOWNLOADERS.has(cmd.name)) return true
  const a = texts(cmd.args)
  if (cmd.name === 'base64' && a.some((x) => x === '-d' || x === '--decode' || x === '-D')) return true
  if (cmd.name === 'xxd' && a.includes('-r')) return true
  if (cmd.name === 'openssl' && a.includes('-d')) return true
  return false
}
/** A target that arrives from input at run time, unless it is known to lie under roots that are not critical (find's `{}` under `.`). */
const unknownTarget = (w: Word) =>
  w.fromInput !== undefined && (w.fromInput.within === undefined || w.fromInput.within.some(isCriticalPath))
/** `$HOME`, `"${HOME}"/`, `$HOME/*`: the home folder as an expansion, quoted or not. */
const HOME_WORD = /^(\$HOME|\$\{HOME\})(\/\*?)?$/
/** `"$DIR"/*`: an empty or unset variable makes it `/*`. */
const VAR_GLOB = /^(["']?)\$\{?([A-Za-z_]\w*|[0-9@*])\}?\1?\/\*$/
const BLOCK_DEVICE =
  /^\/dev\/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|disk\d|rdisk\d|mapper\/|md\d|dm-\d|loop\d|sr\d)/

/**
 * The guard's rules: a table, each row an id, a message and a test on one
 * peeled simple command. Order is the order verdicts are reported in.
 */
export const RULES: readonly GuardRule[] = [
  {
    id: 'pipe-to-shell',
    message: 'downloaded or decoded data piped into a shell or interpreter',
    test: (c) =>
      (readsProgramFromStdin(c) && c.pipedFrom.some(isSource)) ||
      (INTERPRETERS.has(c.name) || c.name === 'source' || c.name === '.' || c.name === 'eval'
        ? c.args.some((a) => a.inner.some(isSource))
        : false),
  },
  {
    id: 'dynamic-command',
    message:
      'the command name is an expansion ($VAR, $(…), `…`) or arrives from input at run time, so what runs cannot be known before it runs',
    test: (c) => c.nameDynamic,
  },
  {
    id: 'interpreter-shell-dynamic',
    message:
      'interpreter code (python -c, perl -e, node -e, ruby -e, php -r, awk system(), sed e, …) runs a shell command built at run time, or evaluates code built at run time (eval, exec, __import__(name), getattr), so what it runs or deletes cannot be checked',
    test: runsComputedShell,
  },
  {
    id: 'rm-recursive-critical',
    message: 'recursive deletion of /, the home folder or a system folder',
    test: (c) =>
      c.name === 'rm' &&
      (texts(c.args).includes('--no-preserve-root') ||
        (hasFlag(c.args, 'rR', ['--recursive']) &&
          operands(c.args).some((a) =>
            a.fromInput
              ? false
              : a.dynamic && !a.values
                ? HOME_WORD.test(unquote(a.text)) || VAR_GLOB.test(a.text)
                : (valuesOf(a) ?? []).some(isCriticalPath),
          ))),
  },
  {
    id: 'fork-bomb',
    message: 'a fork bomb (a function that pipes into itself in the background)',
    test: (c) => c.inFunction === c.name && c.pipedFrom.some((p) => p.name === c.name),
  },
  {
    id: 'mkfs',
    message: 'making or wiping a filesystem (mkfs, wipefs)',
    test: (c) => c.name.startsWith('mkfs') || c.name === 'wipefs' || c.name === 'mkswap',
  },
  {
    id: 'block-device-write',
    message: 'writing to a block device (dd of=/dev/…, > /dev/sda)',
    test: (c) =>
      (c.name === 'dd' && texts(c.args).some((a) => a.startsWith('of=') && BLOCK_DEVICE.test(a.slice(3)))) ||
      c.writesTo.some((t) => BLOCK_DEVICE.test(t)) ||
      (['shred', 'cp', 'tee'].includes(c.name) && texts(c.args).some((a) => BLOCK_DEVICE.test(a))),
  },
  {
    id: 'chmod-chown-system',
    message: 'recursive chmod/chown of / or a system folder',
    test: (c) =>
      ['chmod', 'chown', 'chgrp'].includes(c.name) &&
      hasFlag(c.args, 'R', ['--recursive']) &&
      operands(c.args).some((a) => !a.fromInput && (valuesOf(a) ?? []).some(isCriticalPath)),
  },
  {
    id: 'find-delete-critical',
    message: 'find over / or a system folder with -delete or -exec rm',
    test: (c) => {
      if (c.name !== 'find') return false
      const a = texts(c.args)
      const firstExpr = a.findIndex((x) => x.startsWith('-') || x === '(' || x === '!')
      const roots = firstExpr === -1 ? a : a.slice(0, firstExpr)
      const deletes =
        a.includes('-delete') ||
        a.some((x, i) => (x === '-exec' || x === '-execdir') && basename(a[i + 1] ?? '') === 'rm')
      return deletes && roots.some(isCriticalPath)
    },
  },
  {
    id: 'destructive-unknown-target',
    message:
      'a destructive command (recursive rm, chmod/chown -R, shred, dd of=) whose targets come from input at run time (xargs, parallel, find -exec {} over a system folder), so what it destroys cannot be checked',
    test: (c) => {
      const targets = c.args.filter(unknownTarget)
      if (targets.length === 0) return false
      if (c.name === 'rm') return hasFlag(c.args, 'rR', ['--recursive'])
      if (['chmod', 'chown', 'chgrp'].includes(c.name)) return hasFlag(c.args, 'R', ['--recursive'])
      if (c.name === 'dd') return targets.some((t) => t.text.startsWith('of='))
      return ['shred', 'wipe', 'srm'].includes(c.name)
    },
  },
  {
    id: 'docker-prune',
    message: 'docker system/volume prune or mass container removal',
    test: (c) => {
      if (c.name !== 'docker' && c.name !== 'podman') return false
      const a = texts(c.args)
      if ((a[0] === 'system' || a[0] === 'volume') && a[1] === 'prune') return true
      const isRm = a[0] === 'rm' || (a[0] === 'container' && a[1] === 'rm') || a[0] === 'rmi'
      return isRm && c.args.some((w) => w.dynamic && w.inner.length > 0)
    },
  },
  {
    id: 'git-force-push',
    message: 'git push --force (use --force-with-lease) or deleting a branch on the remote',
    test: (c) => {
      if (c.name !== 'git') return false
      const a = texts(c.args)
      const i = a.indexOf('push')
      if (i === -1) return false
      const rest = a.slice(i + 1)
      if (
        rest.some(
          (x) =>
            x === '--force' ||
            x === '--delete' ||
            x === '--mirror' ||
            (/^-[a-zA-Z]+$/.test(x) && (x.includes('f') || x.includes('d'))),
        )
      )
        return true
      return rest
        .filter((x) => !x.startsWith('-'))
        .slice(1)
        .some((ref) => ref.startsWith(':') || ref.startsWith('+'))
    },
  },
  {
    id: 'kill-all',
    message: 'kill -1 (every process you can signal)',
    // The last operand is the target: `kill -9 -1`, `kill -- -1` (`kill -1 123` is SIGHUP to 123).
    test: (c) => (c.name === 'kill' && texts(c.args).at(-1) === '-1') || c.name === 'killall5',
  },
  {
    id: 'power',
    message: 'shutting down or rebooting the machine',
    test: (c) =>
      ['shutdown', 'reboot', 'halt', 'poweroff'].includes(c.name) ||
      (c.name === 'init' && ['0', '6'].includes(texts(c.args)[0] ?? '')) ||
      (c.name === 'systemctl' &&
        ['poweroff', 'reboot', 'halt', 'kexec'].includes(texts(c.args).find((x) => !x.startsWith('-')) ?? '')),
  },
  ...TARGET_RULES,
]

/** The rule for input the grammar cannot parse: the guard fails closed. */
export const PARSE_ERROR_RULE = {
  id: 'parse-error',
  message: 'the command does not parse as shell; the guard blocks what it cannot read',
} as const
/** Shell strings and wrappers nested deeper than the guard follows are blocked, not followed. */
export const TOO_DEEP_RULE = {
  id: 'too-deep',
  message: 'commands nested too deep (or fanning out too far) to check',
} as const
