import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { repoRoot } from '../helpers/fixtures.js'

type Step = { uses?: string; run?: string; if?: string; name?: string; with?: Record<string, unknown> }
type Job = {
  'runs-on': string
  needs?: string | string[]
  steps: Step[]
  strategy?: { matrix: Record<string, unknown> }
  permissions?: Record<string, string>
  'timeout-minutes'?: number
}
type Workflow = { on: unknown; jobs: Record<string, Job> }

const load = (name: string) =>
  parse(readFileSync(path.join(repoRoot, '.github', 'workflows', name), 'utf8')) as Workflow
const allSteps = (w: Workflow) => Object.values(w.jobs).flatMap((j) => j.steps)

describe('GitHub workflows (they cannot run here, so their shape is checked)', () => {
  it('pin every action to an exact version, and bound every job in time', () => {
    for (const file of ['ci.yml', 'release.yml']) {
      const w = load(file)
      const uses = allSteps(w).flatMap((s) => (s.uses ? [s.uses] : []))
      expect(uses.length, file).toBeGreaterThan(0)
      for (const u of uses) expect(u, `${file}: ${u}`).toMatch(/^actions\/[a-z-]+@v\d+\.\d+\.\d+$/)
      for (const [name, job] of Object.entries(w.jobs))
        expect(job['timeout-minutes'], `${file}: job ${name}`).toBeLessThanOrEqual(25)
    }
  })

  it('ci.yml tests on Ubuntu, macOS and Windows with Node 20, 22 and 24, and smoke-runs the executable per OS', () => {
    const ci = load('ci.yml')
    expect(ci.jobs.test!.strategy!.matrix).toMatchObject({
      os: ['ubuntu-latest', 'macos-latest', 'windows-latest'],
      node: [20, 22, 24],
    })
    const runs = ci.jobs.test!.steps.map((s) => s.run ?? '')
    expect(runs).toContain('npm ci')
    expect(runs).toContain('npm test')
    expect(runs.some((r) => r.includes('bubblewrap'))).toBe(true)
    const exe = ci.jobs.executable!
    expect((exe.strategy!.matrix.include as Array<{ os: string }>).map((i) => i.os).sort()).toEqual([
      'macos-latest',
      'ubuntu-latest',
      'windows-latest',
    ])
    expect(exe.steps.some((s) => s.run === 'npm run build:bin -- --target ${{ matrix.target }}')).toBe(true)
    const smoke = exe.steps.find((s) => s.name === 'Smoke run')?.run ?? ''
    for (const part of ['--version', '--help', ' init ', 'skill templates', 'test "$code" = 2'])
      expect(smoke).toContain(part)
    // version, status --json and serve (a .cmd child on Windows), driven by a client: the same on every runner.
    expect(smoke).toContain('node tests/build/exe-client/smoke.cjs "build/bin/${{ matrix.file }}"')
    expect(existsSync(path.join(repoRoot, 'tests', 'build', 'exe-client', 'smoke.cjs'))).toBe(true)
  })

  it('release.yml runs on v* tags: tests, builds every target on its own runner, signs macOS, checksums, releases, publishes with provenance', () => {
    const rel = load('release.yml')
    expect(rel.on).toEqual({ push: { tags: ['v*'] } })
    expect(rel.jobs.test!.steps.map((s) => s.run ?? '')).toContain('npm test')
    expect(rel.jobs.test!.steps.some((s) => s.run?.includes('"$GITHUB_REF_NAME" = "v$(node -p'))).toBe(true)
    expect(rel.jobs.build!.needs).toBe('test')
    // Each target on a runner of its own OS and architecture, so the V8 code cache is built in.
    const include = rel.jobs.build!.strategy!.matrix.include as Array<{ target: string; os: string; file: string }>
    expect(Object.fromEntries(include.map((i) => [i.target, i.os]))).toEqual({
      'linux-x64': 'ubuntu-latest',
      'linux-arm64': 'ubuntu-24.04-arm',
      'macos-x64': 'macos-15-intel',
      'macos-arm64': 'macos-latest',
      'win-x64': 'windows-latest',
    })
    for (const i of include) expect(i.file).toBe(`myc-${i.target}${i.target.startsWith('win') ? '.exe' : ''}`)
    expect(rel.jobs.build!.steps.some((s) => s.run === 'npm run build:bin -- --target ${{ matrix.target }}')).toBe(true)
    expect(rel.jobs.build!.steps.some((s) => s.uses?.startsWith('actions/upload-artifact@'))).toBe(true)
    expect(
      rel.jobs.build!.steps.some((s) => s.if === "runner.os == 'macOS'" && s.run?.includes('codesign --sign -')),
    ).toBe(true)
    const release = rel.jobs.release!
    expect(release.permissions).toEqual({ contents: 'write' })
    expect(release.steps.some((s) => s.run?.includes('SHA256SUMS'))).toBe(true)
    expect(release.steps.some((s) => s.run?.includes('build/release-notes.mjs'))).toBe(true)
    expect(release.needs).toBe('build')
    expect(release.steps.some((s) => s.uses?.startsWith('actions/download-artifact@'))).toBe(true)
    const create = release.steps.find((s) => s.run?.startsWith('gh release create'))?.run ?? ''
    for (const part of ['--notes-file notes.md', 'dist/myc-*', 'dist/SHA256SUMS']) expect(create).toContain(part)
    const npm = rel.jobs.npm!
    expect(npm.permissions).toMatchObject({ 'id-token': 'write' })
    expect(npm.steps.some((s) => s.run?.includes('npm publish --provenance'))).toBe(true)
  })

  it('release notes come from the CHANGELOG section of the version', async () => {
    const { releaseNotes } = (await import(path.join(repoRoot, 'build', 'release-notes.mjs'))) as {
      releaseNotes: (c: string, v: string) => string | undefined
    }
    const changelog =
      '# Changelog\n\n## [Unreleased]\n\n- next\n\n## [1.2.0] - 2026-11-01\n\n### Added\n- a thing\n\n## [1.1.0]\n\n- old\n'
    expect(releaseNotes(changelog, '1.2.0')).toBe('### Added\n- a thing')
    expect(releaseNotes(changelog, '1.1.0')).toBe('- old')
    expect(releaseNotes(changelog, '9.9.9')).toBeUndefined()
    expect(releaseNotes(changelog, '1.2.0')).not.toContain('old')
  })
})
