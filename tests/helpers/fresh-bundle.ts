import { execFileSync } from 'node:child_process'
import { readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { repoRoot } from './fixtures.js'

/** Newest modification time of a file under `dir` (ms). */
function newest(dir: string): number {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs)
  }
  return latest
}

/**
 * vitest global setup: the end-to-end tests spawn build/myc.cjs, so when
 * src/ (or the build script, or the launcher) is newer than the bundle, build it first.
 */
export default function freshBundle(): void {
  const bundle = path.join(repoRoot, 'build', 'myc-main.cjs')
  let built = 0
  try {
    built = statSync(bundle).mtimeMs
  } catch {
    // not built yet
  }
  const sources = Math.max(
    newest(path.join(repoRoot, 'src')),
    statSync(path.join(repoRoot, 'esbuild.config.mjs')).mtimeMs,
    statSync(path.join(repoRoot, 'build', 'launcher.cjs')).mtimeMs,
  )
  if (sources <= built) return
  process.stderr.write('build/myc.cjs is older than src/: building it first\n')
  execFileSync(process.execPath, ['--import', 'tsx', 'esbuild.config.mjs'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
}
