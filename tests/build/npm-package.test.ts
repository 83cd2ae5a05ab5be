import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { beforeAll, describe, expect, it } from 'vitest'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

describe('the npm package', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'myc-pack-'))
  let tarball = ''
  let files: string[] = []

  beforeAll(() => {
    const out = execFileSync(npm, ['pack', '--json', '--pack-destination', work], { cwd: repoRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], shell: process.platform === 'win32' })
    const info = JSON.parse(out)[0] as { filename: string; files: Array<{ path: string }> }
    tarball = path.join(work, info.filename)
    files = info.files.map((f) => f.path).sort()
  }, 120_000)

  it('holds only what users need', () => {
    const allowed = [/^build\/myc\.cjs$/, /^build\/myc-main\.cjs$/, /^mycelium\.schema\.json$/, /^skills\/[a-z0-9-]+\/SKILL\.md$/, /^README\.md$/, /^LICENSE$/, /^CHANGELOG\.md$/, /^package\.json$/]
    for (const f of files) expect(allowed.some((r) => r.test(f)), f).toBe(true)
    for (const must of ['build/myc.cjs', 'build/myc-main.cjs', 'mycelium.schema.json', 'skills/common/SKILL.md', 'README.md', 'LICENSE', 'CHANGELOG.md']) expect(files).toContain(must)
  })

  it('has no runtime dependencies (everything is bundled) and both bins', () => {
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'))
    expect(pkg.dependencies ?? {}).toEqual({})
    expect(pkg.bin).toEqual({ myc: 'build/myc.cjs', 'mycelium-agg': 'build/myc.cjs' })
  })

  it('installs into a prefix and runs `mycelium-agg --config …` as an MCP server over stdio', async () => {
    const prefix = path.join(work, 'prefix')
    execFileSync(npm, ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--offline', tarball], { stdio: 'ignore', shell: process.platform === 'win32' })
    const bin = path.join(prefix, 'node_modules', '.bin', 'mycelium-agg')
    const config = path.join(work, 'mycelium.config.json')
    writeFileSync(config, JSON.stringify({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } }))
    const client = new Client({ name: 'npm', version: '1' })
    await client.connect(new StdioClientTransport({ command: bin, args: ['--config', config], stderr: 'ignore' }))
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo__echo')
    expect((await client.callTool({ name: 'echo__add', arguments: { a: 20, b: 22 } })).content).toEqual([{ type: 'text', text: '42' }])
    await client.close()
  }, 120_000)
})
