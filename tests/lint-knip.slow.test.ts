import { spawnSync } from 'node:child_process'
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './helpers/fixtures.js'

// knip over a copy of the whole repo takes 10-25 s: it runs with the slow
// suites, and `npm run lint` runs knip on the repo itself everywhere.

/** What knip is not to read or copy: the packages, git, and what the build and bench write. */
const notCopied = new Set(['node_modules', '.git', 'build/bin', 'build/.cache', 'bench/results', 'coverage'])

/** This repo's sources and configs in a folder of their own (the packages linked, not copied), to run knip on. */
function repoCopy(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'myc-knip-'))
  cpSync(repoRoot, root, {
    recursive: true,
    filter: (from) => {
      const rel = path.relative(repoRoot, from).split(path.sep).join('/')
      return !notCopied.has(rel) && !/^build\/.*\.(cjs|map)$/.test(rel)
    },
  })
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'), 'dir')
  return root
}

interface KnipIssue {
  file: string
  files?: unknown[]
  exports?: { name: string }[]
  types?: { name: string }[]
  devDependencies?: { name: string }[]
}

/** Each issue of knip's JSON report as one line: `file x`, `export x: name`, `devDependency name`. */
function knipIssues(report: string): string[] {
  const { issues } = JSON.parse(report) as { issues: KnipIssue[] }
  return issues.flatMap((i) => [
    ...(i.files ?? []).map(() => `file ${i.file}`),
    ...[...(i.exports ?? []), ...(i.types ?? [])].map((e) => `export ${i.file}: ${e.name}`),
    ...(i.devDependencies ?? []).map((d) => `devDependency ${d.name}`),
  ])
}

describe('the unused-code check of npm run lint', () => {
  it('knip runs after prettier, finds nothing in this repo, and finds a stray file, export and dependency', () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: { lint: string }
      devDependencies: Record<string, string>
    }
    expect(pkg.scripts.lint).toMatch(/prettier --check [^&]*&& knip --no-progress &&/)
    const root = repoCopy()
    try {
      appendFileSync(path.join(root, 'src', 'words.ts'), '\nexport const strayExport = 1\n')
      writeFileSync(path.join(root, 'src', 'stray-file.ts'), 'export const stray = 1\n')
      pkg.devDependencies['left-pad'] = '1.3.0'
      writeFileSync(path.join(root, 'package.json'), JSON.stringify(pkg, null, 2))
      const knip = path.join(repoRoot, 'node_modules', 'knip', 'bin', 'knip.js')
      const found = spawnSync(process.execPath, [knip, '--no-progress', '--reporter', 'json'], {
        cwd: root,
        encoding: 'utf8',
      })
      expect(found.status, found.stderr).toBe(1)
      // Exactly the three strays: anything else would be unused code in this repo itself.
      expect(knipIssues(found.stdout).sort()).toEqual([
        'devDependency left-pad',
        'export src/words.ts: strayExport',
        'file src/stray-file.ts',
      ])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 120_000)
})
