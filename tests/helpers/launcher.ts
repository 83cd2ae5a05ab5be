import { copyFileSync, existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { expect } from 'vitest'
import { bundle, requireBundle } from './e2e.js'
import { repoRoot } from './fixtures.js'

/** The launcher's tests (tests/build/launcher*.test.ts): a copy of build/myc.cjs and the bundle, run and looked into. */

/** Every file below `dir`. */
export function filesBelow(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
}

/** A copy of the launcher and the bundle in a folder of their own (as npm installs them): its launcher's path. */
export function installed(): string {
  requireBundle()
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-launcher-'))
  copyFileSync(bundle, path.join(dir, 'myc.cjs'))
  copyFileSync(path.join(repoRoot, 'build', 'myc-main.cjs'), path.join(dir, 'myc-main.cjs'))
  return path.join(dir, 'myc.cjs')
}

/** Runs the launcher with `node` and checks it printed myc's version: stdout and stderr. */
export function version(launcher: string, node = process.execPath, env: NodeJS.ProcessEnv = {}, args: string[] = []) {
  const r = spawnSync(node, [...args, launcher, '--version'], {
    encoding: 'utf8',
    env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: undefined, NODE_COMPILE_CACHE: undefined, ...env },
  })
  expect(r.status, r.stderr).toBe(0)
  expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  return `${r.stdout}${r.stderr}`
}

export const cacheOf = (launcher: string) => path.join(path.dirname(launcher), '.code-cache')
