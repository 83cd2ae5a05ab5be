import { spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { repoRoot } from '../helpers/fixtures.js'

// README.md's "From a release" commands, run for real against a local fake
// release: they must install a verified `myc`, and must fail (leaving no
// `myc`) when the download does not match SHA256SUMS or is not listed in it.

const RELEASE_URL = 'https://github.com/<owner>/<repo>/releases/latest/download'

/** The README text of the "From a release" paragraph, up to "From npm". */
function releaseSection(): string {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
  const start = readme.indexOf('**From a release**')
  const end = readme.indexOf('**From npm**', start)
  expect(start, 'README.md has a "From a release" paragraph').toBeGreaterThan(-1)
  expect(end).toBeGreaterThan(start)
  return readme.slice(start, end)
}

/** The fenced code block of the section that mentions `file` (its language and body). */
function block(file: string): { lang: string; body: string } {
  const blocks = [...releaseSection().matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, body: m[2]! }))
  const found = blocks.filter((b) => b.body.includes(file))
  expect(found, `one code block downloads ${file}`).toHaveLength(1)
  return found[0]!
}

type Step = { name?: string; run?: string; 'working-directory'?: string }
type Workflow = {
  jobs: Record<string, { steps: Step[]; strategy?: { matrix: { include?: Array<{ file: string }> } } }>
}
const release = () =>
  parse(readFileSync(path.join(repoRoot, '.github', 'workflows', 'release.yml'), 'utf8')) as Workflow

/** The release's file names, from the build matrix of release.yml. */
const releaseFiles = () => release().jobs.build!.strategy!.matrix.include!.map((i) => i.file)

/**
 * A release folder as the workflow makes it: every executable (small fakes;
 * `file` is a script printing a version), then SHA256SUMS written by the
 * workflow's own "Checksums" step.
 */
function fakeRelease(file: string): string {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'myc-release-')), 'dist')
  mkdirSync(dir)
  for (const name of releaseFiles())
    writeFileSync(path.join(dir, name), name === file ? '#!/bin/sh\necho 9.8.7\n' : `not ${file}: ${name}\n`)
  const step = release().jobs.release!.steps.find((s) => s.name === 'Checksums')
  expect(step?.run, 'release.yml has a Checksums step').toBeDefined()
  expect(step!['working-directory']).toBe('dist')
  // How GitHub runs a `run:` step on Linux.
  const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step!.run!], {
    cwd: dir,
    encoding: 'utf8',
  })
  expect(r.status, r.stderr).toBe(0)
  expect(readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8')).toMatch(
    new RegExp(`^[0-9a-f]{64}  ${file.replace('.', '\\.')}$`, 'm'),
  )
  return dir
}

/** Runs the README's commands in a new empty folder, downloading from `releaseDir` instead of GitHub. */
function install(body: string, releaseDir: string) {
  const commands = body.replaceAll(RELEASE_URL, `file://${releaseDir}`)
  expect(commands, 'every download comes from the local release').not.toMatch(/https?:\/\//)
  const cwd = mkdtempSync(path.join(tmpdir(), 'myc-install-'))
  // A person pasting into bash: no -e, no pipefail.
  const r = spawnSync('bash', ['--noprofile', '--norc', '-c', commands], { cwd, encoding: 'utf8', timeout: 30_000 })
  return { code: r.status, out: r.stdout + r.stderr, myc: path.join(cwd, 'myc') }
}

const has = (tool: string) => process.platform !== 'win32' && spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0
const unix = has('bash') && has('curl') && has('grep')

describe('README: installing from a release', () => {
  it('names exactly the files the release workflow publishes, and downloads them from the release URL', () => {
    const section = releaseSection()
    // `myc-win-x64\.exe` in a regular expression names myc-win-x64.exe too.
    const named = new Set((section.match(/\bmyc-[a-z0-9-]+(?:\\?\.exe)?\b/g) ?? []).map((n) => n.replace('\\', '')))
    expect([...named].sort()).toEqual([...releaseFiles()].sort())
    expect(section).toContain('SHA256SUMS')
    for (const file of ['myc-linux-x64', 'myc-macos-arm64', 'myc-win-x64.exe']) {
      const { body } = block(file)
      expect(body).toContain(`${RELEASE_URL}`)
      expect(body).toContain('SHA256SUMS')
    }
  })

  describe.each([
    ['Linux', 'myc-linux-x64', 'sha256sum'],
    ['macOS', 'myc-macos-arm64', 'shasum'],
  ])('the %s commands', (_os, file, checker) => {
    const runnable = unix && has(checker)

    it.skipIf(!runnable)('download, verify and leave an executable myc', () => {
      const { lang, body } = block(file)
      expect(lang).toBe('sh')
      const r = install(body, fakeRelease(file))
      expect(r.code, r.out).toBe(0)
      expect(r.out).toContain(`${file}: OK`)
      expect(statSync(r.myc).mode & 0o111, 'myc is executable').not.toBe(0)
      expect(spawnSync(r.myc, ['--version'], { encoding: 'utf8' }).stdout.trim()).toBe('9.8.7')
    })

    it.skipIf(!runnable)('fail, leaving no myc, when the download does not match SHA256SUMS', () => {
      const releaseDir = fakeRelease(file)
      appendFileSync(path.join(releaseDir, file), 'echo tampered\n')
      const r = install(block(file).body, releaseDir)
      expect(r.code, r.out).not.toBe(0)
      expect(r.out).toMatch(/FAILED|did NOT match/)
      expect(existsSync(r.myc)).toBe(false)
    })

    it.skipIf(!runnable)('fail, leaving no myc, when SHA256SUMS has no line for the download', () => {
      const releaseDir = fakeRelease(file)
      const sums = path.join(releaseDir, 'SHA256SUMS')
      writeFileSync(
        sums,
        readFileSync(sums, 'utf8')
          .split('\n')
          .filter((l) => !l.endsWith(`  ${file}`))
          .join('\n'),
      )
      const r = install(block(file).body, releaseDir)
      expect(r.code, r.out).not.toBe(0)
      expect(existsSync(r.myc)).toBe(false)
    })

    it.skipIf(!runnable)('fail when the download itself fails', () => {
      const releaseDir = fakeRelease(file)
      const r = install(block(file).body, path.join(releaseDir, 'missing'))
      expect(r.code).not.toBe(0)
      expect(existsSync(r.myc)).toBe(false)
    })
  })

  it('the PowerShell commands compare Get-FileHash with the SHA256SUMS line and rename only on a match', () => {
    const { lang, body } = block('myc-win-x64.exe')
    expect(lang).toBe('powershell')
    expect(body).toMatch(/Invoke-WebRequest -OutFile myc-win-x64\.exe "\$base\/myc-win-x64\.exe"/)
    expect(body).toMatch(/Invoke-WebRequest -OutFile SHA256SUMS "\$base\/SHA256SUMS"/)
    expect(body).toMatch(/Select-String -Path SHA256SUMS -Pattern ' myc-win-x64\\\.exe\$'/)
    expect(body).toMatch(/Get-FileHash myc-win-x64\.exe -Algorithm SHA256/)
    // The rename sits inside the branch taken on a match; any other outcome throws.
    const moves = body.split('\n').filter((l) => l.includes('Move-Item'))
    expect(moves).toHaveLength(1)
    expect(moves[0]).toMatch(
      /^if \(\$actual -eq \$expected\) \{ Move-Item myc-win-x64\.exe myc\.exe;.*\} else \{ throw /,
    )
  })
})
