import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { beforeAll, describe, expect, it } from 'vitest'
import { toolsWithTelemetry } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const { embeddedFiles } = (await import(path.join(repoRoot, 'build', 'embedded-libraries.mjs'))) as {
  embeddedFiles: () => string[]
}

describe('the npm package', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'myc-pack-'))
  let tarball = ''
  let files: string[] = []

  beforeAll(() => {
    const out = execFileSync(npm, ['pack', '--json', '--pack-destination', work], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      shell: process.platform === 'win32',
    })
    const info = JSON.parse(out)[0] as { filename: string; files: Array<{ path: string }> }
    tarball = path.join(work, info.filename)
    files = info.files.map((f) => f.path).sort()
  }, 120_000)

  it('holds only what users need', () => {
    const allowed = [
      /^build\/myc\.cjs$/,
      /^build\/myc-main\.cjs$/,
      /^build\/[a-z-]+\.(cjs|wasm)\.gz$/,
      /^mycelium\.schema\.json$/,
      /^skills\/[a-z0-9-]+\/SKILL\.md$/,
      /^README\.md$/,
      /^LICENSE$/,
      /^CHANGELOG\.md$/,
      /^package\.json$/,
    ]
    for (const f of files)
      expect(
        allowed.some((r) => r.test(f)),
        f,
      ).toBe(true)
    for (const must of [
      'build/myc.cjs',
      'build/myc-main.cjs',
      'mycelium.schema.json',
      'skills/common/SKILL.md',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      ...embeddedFiles().map((name) => `build/${name}`),
    ])
      expect(files).toContain(must)
  })

  it('builds the program first when packed from a fresh clone (prepack)', () => {
    // A copy of what a clone holds: the repo's own files (build/ outputs are ignored), node_modules shared.
    const clone = mkdtempSync(path.join(tmpdir(), 'myc-clone-'))
    const tracked = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
      .split('\0')
      .filter(Boolean)
    for (const f of tracked) {
      if (!existsSync(path.join(repoRoot, f))) continue
      mkdirSync(path.dirname(path.join(clone, f)), { recursive: true })
      copyFileSync(path.join(repoRoot, f), path.join(clone, f))
    }
    symlinkSync(path.join(repoRoot, 'node_modules'), path.join(clone, 'node_modules'))
    expect(existsSync(path.join(clone, 'build', 'myc.cjs'))).toBe(false)
    const out = execFileSync(npm, ['pack', '--dry-run', '--json'], {
      cwd: clone,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      shell: process.platform === 'win32',
    })
    const listed = (JSON.parse(out)[0] as { files: Array<{ path: string }> }).files.map((f) => f.path)
    expect(listed).toEqual(expect.arrayContaining(['build/myc.cjs', 'build/myc-main.cjs']))
  }, 120_000)

  it('has no runtime dependencies (everything is bundled) and both bins', () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'))
    expect(pkg.dependencies ?? {}).toEqual({})
    expect(pkg.bin).toEqual({ myc: 'build/myc.cjs', 'mycelium-agg': 'build/myc.cjs' })
  })

  it('installs into a prefix and runs `mycelium-agg --config …` as an MCP server over stdio', async () => {
    const prefix = path.join(work, 'prefix')
    execFileSync(npm, ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--offline', tarball], {
      stdio: 'ignore',
      shell: process.platform === 'win32',
    })
    const bin = path.join(prefix, 'node_modules', '.bin', 'mycelium-agg')
    const config = path.join(work, 'mycelium.config.json')
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } }),
    )
    const client = new Client({ name: 'npm', version: '1' })
    await client.connect(new StdioClientTransport({ command: bin, args: ['--config', config], stderr: 'ignore' }))
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo__echo')
    expect((await client.callTool({ name: 'echo__add', arguments: { a: 20, b: 22 } })).content).toEqual([
      { type: 'text', text: '42' },
    ])
    await client.close()
    // OpenTelemetry is a file of the package beside the bundle, read when tracing or metrics are on.
    const r = await toolsWithTelemetry(bin, config)
    expect(r.code, r.stderr).toBe(0)
    expect(r.paths).toContain('/v1/metrics')
    // The shell guard's grammar is two files of the package too.
    const guard = execFileSync(bin, ['sandbox', 'guard', '--json', '--', 'ls -la | grep foo'], { encoding: 'utf8' })
    expect(JSON.parse(guard)).toEqual({ ok: true, commands: 2 })
  }, 120_000)
})
