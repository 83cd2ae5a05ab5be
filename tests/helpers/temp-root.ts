import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

/**
 * vitest global setup: one temp folder for the whole run, removed at its
 * end. Tests make their folders with `mkdtempSync(path.join(tmpdir(), …))`
 * and many leave them (a folder per case, tens of thousands a day on a
 * developer's machine); with TMPDIR pointing here for the workers and every
 * process they start, a run leaves nothing, and two runs on one machine
 * never share a temp folder. Set before the workers start, so they inherit
 * it; a process started with an environment of its own uses the system's.
 */
export default function tempRoot(): () => void {
  const before = process.env.TMPDIR
  const root = mkdtempSync(path.join(tmpdir(), 'myc-test-run-'))
  // As the system's temp folder is: the sandbox tests run commands as another user (nobody).
  chmodSync(root, 0o1777)
  process.env.TMPDIR = root
  return () => {
    if (before === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = before
    removeTree(root)
  }
}

/**
 * `rm -rf` where there is one: a run leaves ~10,000 entries, which Node 20's
 * `rmSync` (a JavaScript walk, a call per entry) took 0.3-0.8 s of the main
 * process to remove at the run's end, against 0.15-0.2 s for rm.
 */
function removeTree(root: string): void {
  const rm = spawnSync('rm', ['-rf', root], { encoding: 'utf8' })
  if (rm.status === 0) return
  try {
    rmSync(root, { recursive: true, force: true, maxRetries: 3 })
  } catch (error) {
    // A folder a test made unreadable as a user other than root: say where it is, the run's result stands.
    process.stderr.write(`could not remove the run's temp folder ${root}: ${String(error)}\n`)
  }
}
