import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { beforeAll, describe, expect, it } from 'vitest'
import { binaryFormat } from '../helpers/binary-format.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'

const binDir = path.join(repoRoot, 'build', 'bin')
const bundle = path.join(repoRoot, 'build', 'myc.cjs')
const linux = path.join(binDir, 'myc-linux-x64')
const expected: Record<string, { format: string; arch: string }> = {
  'myc-linux-x64': { format: 'ELF', arch: 'x64' },
  'myc-linux-arm64': { format: 'ELF', arch: 'arm64' },
  'myc-macos-x64': { format: 'Mach-O', arch: 'x64' },
  'myc-macos-arm64': { format: 'Mach-O', arch: 'arm64' },
  'myc-win-x64.exe': { format: 'PE', arch: 'x64' },
}
const onLinuxX64 = process.platform === 'linux' && process.arch === 'x64'

// A PATH with no node on it: the executable must not need one.
const bareDir = mkdtempSync(path.join(tmpdir(), 'myc-nonode-'))
const env = { PATH: bareDir, HOME: bareDir }

function run(args: string[], input = '') {
  const r = spawnSync(linux, args, { env, encoding: 'utf8', input, cwd: bareDir, timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe.runIf(onLinuxX64)('the Linux single executable', () => {
  beforeAll(() => {
    // Build it when missing or older than the bundle (`npm test` builds the bundle first).
    if (!existsSync(linux) || statSync(linux).mtimeMs < statSync(bundle).mtimeMs) {
      execFileSync(process.execPath, [path.join(repoRoot, 'build', 'build-bin.mjs')], { stdio: 'inherit', cwd: repoRoot })
    }
    if (process.env.MYC_TEST_ALL_TARGETS) execFileSync(process.execPath, [path.join(repoRoot, 'build', 'build-bin.mjs'), '--all'], { stdio: 'inherit', cwd: repoRoot })
  }, 300_000)

  it('is an x86-64 ELF file', () => {
    expect(binaryFormat(linux)).toEqual({ format: 'ELF', arch: 'x64' })
  })

  it('every other built target has the right format and architecture', () => {
    for (const [name, want] of Object.entries(expected)) {
      const file = path.join(binDir, name)
      if (!existsSync(file)) continue
      expect(binaryFormat(file), name).toEqual(want)
    }
  })

  it('runs with no node on PATH: --version and --help', () => {
    expect(spawnSync('sh', ['-c', 'command -v node'], { env }).status).not.toBe(0)
    const v = run(['--version'])
    expect(v.code).toBe(0)
    expect(v.stdout.trim()).toBe(JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).version)
    const h = run(['--help'])
    expect(h.code).toBe(0)
    expect(h.stdout).toMatch(/serve/)
  })

  it('myc init writes the bundled templates', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-exe-init-'))
    const r = run(['init', dir])
    expect(r.code).toBe(0)
    expect(existsSync(path.join(dir, 'mycelium.config.json'))).toBe(true)
    expect(existsSync(path.join(dir, 'skills', 'admin-access', 'SKILL.md'))).toBe(true)
  })

  it('a bad config exits 2', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-exe-bad-')), 'mycelium.config.json')
    writeFileSync(file, '{"mcpServers":{"x":{"comand":"y"}}}')
    const r = run(['status', '--config', file])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/did you mean "command"/)
  })

  it('serves MCP with a fixture child started by absolute path', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-exe-serve-')), 'mycelium.config.json')
    writeFileSync(file, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } }))
    const client = new Client({ name: 'exe', version: '1' })
    await client.connect(new StdioClientTransport({ command: linux, args: ['--config', file], env, stderr: 'ignore' }))
    expect(client.getServerVersion()?.name).toBe('mycelium')
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo__echo')
    const r = await client.callTool({ name: 'echo__echo', arguments: { message: 'from the executable' } })
    expect(r.content).toEqual([{ type: 'text', text: 'from the executable' }])
    await client.close()
  })
})
