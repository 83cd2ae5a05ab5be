import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Policy, visibleBuiltins } from '../../src/policy/policy.js'
import { resolveRoles } from '../../src/policy/roles.js'
import { loadSkills } from '../../src/skills/load-skills.js'
import { repoRoot } from '../helpers/fixtures.js'
import { npmServer } from '../helpers/e2e.js'

/** The bundled templates against the real servers of the repo's example config (`fs`, `memory`). */
describe('bundled skill templates', () => {
  const clients: Client[] = []
  const catalogue = new Map<string, Set<string>>()

  beforeAll(async () => {
    const work = mkdtempSync(path.join(tmpdir(), 'myc-templates-'))
    const servers: Record<string, { args: string[]; env?: Record<string, string> }> = {
      fs: { args: [npmServer('server-filesystem'), work] },
      memory: { args: [npmServer('server-memory')], env: { MEMORY_FILE_PATH: path.join(work, 'memory.jsonl') } },
    }
    for (const [key, s] of Object.entries(servers)) {
      const client = new Client({ name: 'templates-test', version: '1' })
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: s.args,
          env: { ...(process.env as Record<string, string>), ...s.env },
          stderr: 'ignore',
        }),
      )
      clients.push(client)
      catalogue.set(key, new Set((await client.listTools()).tools.map((t) => t.name)))
    }
  }, 30_000)
  afterAll(async () => {
    for (const c of clients) await c.close()
  })

  async function policy() {
    const { skills, problems } = await loadSkills(['skills'], { baseDir: repoRoot, separator: '__' })
    expect(problems).toEqual([])
    const roles = resolveRoles(skills, new Map())
    if (!roles.ok) throw new Error(roles.error)
    return new Policy({
      skills,
      roles: roles.roles,
      servers: new Set(catalogue.keys()),
      separator: '__',
      catalogue: { toolsOf: (s) => catalogue.get(s) },
    })
  }

  it('all load and pass strict loading against the live tool lists', async () => {
    const p = await policy()
    expect([...p.skills.keys()].sort()).toEqual([
      'admin-access',
      'code-reviewer',
      'common',
      'editor',
      'git-workflow',
      'reader',
      'test-runner',
    ])
    expect(catalogue.get('fs')?.size).toBeGreaterThan(5)
    expect(catalogue.get('memory')?.size).toBeGreaterThan(5)
    expect(Object.fromEntries([...p.disabled].map(([k, d]) => [k, d.reasons]))).toEqual({})
  })

  it('each has real instructions and a description', async () => {
    for (const s of (await policy()).skills.values()) {
      expect(s.description.length, s.name).toBeGreaterThan(20)
      expect(s.instructions.split('\n').length, s.name).toBeGreaterThan(4)
      expect(s.allowedRoles.length, s.name).toBeGreaterThan(0)
    }
  })

  it('common and reader never show a tool that changes anything', async () => {
    const p = await policy()
    const f = p.filter('guest', new Set(['common', 'reader']))
    const visible = [...catalogue].flatMap(([s, tools]) =>
      [...tools].filter((t) => f.toolVisible(s, t)).map((t) => `${s}:${t}`),
    )
    expect(visible.length).toBeGreaterThan(5)
    for (const id of visible) expect(id).not.toMatch(/write|edit|move|create|delete|add_/)
    expect(visibleBuiltins(f)).toEqual([
      'list_skills',
      'activate_skill',
      'deactivate_skill',
      'get_context',
      'search_tools',
    ])
  })

  it('common is protected and reaches every role; admin-access only admin', async () => {
    const p = await policy()
    expect(p.skills.get('common')!.protected).toBe(true)
    for (const role of p.roles.keys()) expect(p.reaches(role, 'common'), role).toBe(true)
    expect([...p.roles.keys()].filter((r) => p.reaches(r, 'admin-access'))).toEqual(['admin'])
    const admin = p.filter('admin', new Set(['admin-access']))
    expect([
      admin.toolVisible('memory', 'delete_entities'),
      admin.toolVisible('fs', 'write_file'),
      admin.memory,
    ]).toEqual([true, true, 'all'])
    expect(visibleBuiltins(admin)).toContain('exec')
  })
})
