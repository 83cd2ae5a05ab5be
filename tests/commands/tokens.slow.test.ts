import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runHere } from '../helpers/cli.js'
import { repoRoot } from '../helpers/fixtures.js'

interface Cost {
  tools: number
  tokens: number
  ratio: number
  skills: string[]
}
interface CodeCost {
  tools: number
  tokens: number
  ratio: number
  sessions: boolean
  agent: boolean
}
interface TokensDoc {
  ok: true
  counter: string
  open: { tools: number; tokens: number }
  lazy: { tools: number; tokens: number; ratio: number; on: boolean }
  codeMode: CodeCost
  roles: Array<{
    role: string
    start: Cost
    allSkills: Cost
    codeMode: CodeCost
    largest: Array<{ name: string; tokens: number }>
    systemPrompt: { tokens: number }
  }>
}

const myc = (args: string[], cwd?: string) => runHere(args, '', cwd ? { cwd } : {})

/**
 * `myc tokens` on `myc init`'s own project (in process). The project sits
 * under the repo's node_modules, so its `npx -y` servers resolve to the
 * installed packages (no download).
 */
describe('myc tokens on a myc init project (in process)', () => {
  let dir = ''
  let config = ''
  let doc: TokensDoc

  beforeAll(async () => {
    const base = path.join(repoRoot, 'node_modules', '.cache')
    mkdirSync(base, { recursive: true })
    dir = path.join(mkdtempSync(path.join(base, 'myc-tokens-')), 'project')
    expect((await myc(['init', dir])).code).toBe(0)
    config = path.join(dir, 'mycelium.config.json')
    const r = await myc(['tokens', '--config', config, '--json'])
    expect(r.code, r.stderr).toBe(0)
    doc = JSON.parse(r.stdout) as TokensDoc
  }, 60_000)
  afterAll(() => {
    if (dir) rmSync(path.dirname(dir), { recursive: true, force: true })
  })

  it('the README’s table of figures is what this command prints', async () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
    const n = (x: number) => x.toLocaleString('en-US')
    const pct = (ratio: number) => `${(ratio * 100).toFixed(1).replace(/\.0$/, '')}%`
    expect(readme).toContain(`| open mode | ${doc.open.tools} tools, ${n(doc.open.tokens)} tokens | 100% |`)
    expect(readme).toContain(
      `| open mode, \`session.lazyTools\` | ${doc.lazy.tools} tools, ${n(doc.lazy.tokens)} tokens | ${pct(doc.lazy.ratio)} |`,
    )
    for (const role of ['developer', 'guest']) {
      const r = doc.roles.find((x) => x.role === role)!
      expect(readme).toContain(
        `| role ${role} | ${r.start.tools} tools, ${n(r.start.tokens)} tokens | ${pct(r.start.ratio)} |`,
      )
    }
  })

  it('a fresh developer session costs at most 10% of open mode, and says which counter it used', async () => {
    expect(doc.counter).toBe('JSON characters / 4, rounded up')
    expect(doc.open.tools).toBeGreaterThanOrEqual(20)
    const developer = doc.roles.find((r) => r.role === 'developer')!
    expect(developer.start).toMatchObject({ tools: 5, skills: [] })
    expect(developer.start.ratio).toBeLessThanOrEqual(0.1)
    expect(developer.start.tokens / doc.open.tokens).toBeLessThanOrEqual(0.1)
  })

  it('reports every role: at start, with every skill it reaches active, its largest tools and the agent’s system prompt', async () => {
    expect(doc.roles.map((r) => r.role)).toEqual(['admin', 'developer', 'guest', 'reviewer'])
    for (const r of doc.roles) {
      expect(r.start.ratio, r.role).toBeLessThanOrEqual(0.1)
      expect(r.allSkills.tokens, r.role).toBeGreaterThan(r.start.tokens)
      expect(r.allSkills.skills, r.role).toContain('common')
      expect(r.largest.length, r.role).toBe(5)
      expect(r.largest[0]!.tokens, r.role).toBeGreaterThanOrEqual(r.largest[4]!.tokens)
      expect(r.systemPrompt.tokens, r.role).toBeGreaterThan(20)
    }
    const admin = doc.roles.find((r) => r.role === 'admin')!
    // admin-access allows every fs and memory tool, exec and run_script, and grants memory: more than open mode.
    expect(admin.allSkills.tools).toBe(doc.open.tools + 5 + 5)
    expect(admin.allSkills.ratio).toBeGreaterThan(1)
  })

  it('--role narrows to one role; an unknown role is a usage error naming the roles', async () => {
    const one = JSON.parse((await myc(['tokens', '--config', config, '--role', 'guest', '--json'])).stdout) as TokensDoc
    expect(one.roles.map((r) => r.role)).toEqual(['guest'])
    expect(one.roles[0]).toEqual(doc.roles.find((r) => r.role === 'guest'))
    const bad = await myc(['tokens', '--config', config, '--role', 'nobody'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/no role "nobody" \(roles: admin, developer, guest, reviewer\)/)
  })

  it('prints the same as text, counter first', async () => {
    const r = await myc(['tokens', '--config', config, '--role', 'developer'])
    expect(r.code, r.stderr).toBe(0)
    const developer = doc.roles.find((x) => x.role === 'developer')!
    expect(r.stdout.split('\n')[0]).toBe('counter: JSON characters / 4, rounded up')
    expect(r.stdout).toContain(`open mode: ${doc.open.tools} tools, ${doc.open.tokens} tokens`)
    expect(r.stdout).toContain(
      `session start: 5 tools, ${developer.start.tokens} tokens (${(developer.start.ratio * 100).toFixed(1)}% of open mode; skills: none)`,
    )
    expect(r.stdout).toMatch(/largest: \S+ \d+, /)
  })

  it('myc preview skill counts with the same counter: common, then reader, add what guest gains with both', async () => {
    const preview = async (args: string[]) =>
      JSON.parse(
        (await myc(['preview', 'skill', ...args, '--config', config, '--role', 'guest', '--json'])).stdout,
      ) as {
        addedTokens: number
        counter: string
      }
    const common = await preview(['common'])
    const reader = await preview(['reader', '--skills', 'common'])
    expect(common.counter).toBe(doc.counter)
    const guest = doc.roles.find((r) => r.role === 'guest')!
    expect(guest.allSkills.skills).toEqual(['common', 'reader'])
    // Each count rounds up once: the sums may differ by that rounding alone.
    expect(
      Math.abs(common.addedTokens + reader.addedTokens - (guest.allSkills.tokens - guest.start.tokens)),
    ).toBeLessThanOrEqual(2)
  })

  it('in open mode: the open figure alone; --role is refused as roles are', async () => {
    const open = mkdtempSync(path.join(tmpdir(), 'myc-tokens-open-'))
    const file = path.join(open, 'mycelium.config.json')
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: {
          echo: { command: process.execPath, args: [path.join(repoRoot, 'tests', 'fixtures', 'servers', 'echo.mjs')] },
        },
      }),
    )
    const r = JSON.parse((await myc(['tokens', '--config', file, '--json'])).stdout) as TokensDoc
    expect(r.roles).toEqual([])
    expect(r.open.tools).toBeGreaterThan(2)
    expect((await myc(['tokens', '--config', file, '--role', 'guest'])).code).toBe(2)
    rmSync(open, { recursive: true, force: true })
  })
})
