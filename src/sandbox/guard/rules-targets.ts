import { isKernelFile, normalize, valuesOf, wordZone } from './paths.js'
import type { GuardRule } from './rule.js'
import { destroyedBy, writtenBy } from './targets.js'

/** A value as an absolute path when the working directory makes it one (`cd /proc; echo b > sysrq-trigger`). */
function absolute(value: string, wd: string | null | undefined): string {
  if (value.startsWith('/') || !wd || !wd.startsWith('/')) return value
  return `/${normalize(`${wd}/${value}`).parts.join('/')}`
}

/**
 * The rules on what a command destroys (see targets.ts): whatever it
 * deletes, moves away, truncates or overwrites must be known before it runs
 * and lie in the workspace (or scratch space); kernel files are never written.
 */
export const TARGET_RULES: readonly GuardRule[] = [
  {
    id: 'kernel-write',
    message:
      'writing a kernel or raw-memory file (/proc/…, /sys/…, /dev/mem): echo b > /proc/sysrq-trigger and the like reconfigure or crash the machine',
    test: (c) => writtenBy(c).some((w) => (valuesOf(w) ?? []).some((v) => isKernelFile(absolute(v, c.wd)))),
  },
  {
    id: 'delete-outside-workspace',
    message:
      'deleting, moving away, emptying or overwriting something outside the workspace (a system folder or file, the home folder, a path above the workspace, a glob over one)',
    test: (c, opts) =>
      (c.linked ?? []).some((w) => wordZone(w, '.', opts) === 'outside') ||
      // Any target outside the workspace, a single named file too (`rm -f /etc/myapp.conf`): the general rule, not a list.
      destroyedBy(c).some((t) => wordZone(t.word, c.wd, opts) === 'outside'),
  },
  {
    id: 'destructive-dynamic-target',
    message:
      'a destructive command (rm -r, mv, cp, rsync, truncate, shred, dd of=, chmod -R, > file, a delete call in interpreter code) whose target is an expansion the guard cannot resolve before it runs ($VAR, $1, $(…), a loop or read variable, ${X:-…}, a folder changed to with cd)',
    test: (c, opts) =>
      (c.linked ?? []).some((w) => wordZone(w, '.', opts) === 'unknown') ||
      destroyedBy(c).some((t) => t.strict && wordZone(t.word, c.wd, opts) === 'unknown'),
  },
  {
    id: 'runs-written-program',
    message:
      'runs a program written earlier in the same command (echo … > x.sh && sh x.sh, a Makefile then make, a git hook then git) or read from stdin (make -f -, make --eval), which the guard cannot read',
    test: (c) => c.runsWritten === true,
  },
]
