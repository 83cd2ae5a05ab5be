import { describe, expect, it } from 'vitest'
import { BUILTIN_SERVER, Policy, visibleBuiltins } from '../../src/policy/policy.js'
import { resolveRoles, type RoleDefinitionInput } from '../../src/policy/roles.js'
import type { Skill } from '../../src/policy/skill-definition.js'
import { facts, skill } from './helpers.js'

function policyOf(
  skills: Skill[],
  defs: Record<string, RoleDefinitionInput> = {},
  cat: Record<string, string[]> = { fs: ['read_file', 'write_file'], git: ['log'] },
  servers = ['fs', 'git'],
) {
  const r = resolveRoles(skills, new Map(Object.entries(defs)))
  if (!r.ok) throw new Error(r.error)
  return new Policy({ skills, roles: r.roles, servers: new Set(servers), separator: '__', catalogue: facts(cat) })
}

describe('built-in tools', () => {
  const skills = [
    skill('plain', { allowedRoles: ['dev'], allowedTools: ['fs:read_file'] }),
    skill('shell', { allowedRoles: ['dev'], allowedTools: ['mycelium:exec'] }),
    skill('scripts', { allowedRoles: ['dev'], allowedTools: ['mycelium__run_script'] }),
    skill('everything', { allowedRoles: ['dev'], allowedTools: ['*'] }),
    skill('notes', { allowedRoles: ['dev'], allowedTools: [], grants: { memory: 'isolated', memoryTeamRoles: [] } }),
    skill('memtools', { allowedRoles: ['dev'], allowedTools: ['mycelium:save_memory'] }),
  ]
  const policy = policyOf(skills, { locked: { inherits: 'dev', deny: ['mycelium:exec', 'mycelium:recall_memory'] } })
  const builtins = (role: string, active: string[], o?: Parameters<typeof visibleBuiltins>[1]) =>
    visibleBuiltins(policy.filter(role, new Set(active)), o)
  const META = ['list_skills', 'activate_skill', 'deactivate_skill', 'get_context', 'search_tools']

  it('serves the meta tools alone when no active skill allows more', () => {
    expect(builtins('dev', [])).toEqual(META)
    expect(builtins('dev', ['plain'])).toEqual(META)
  })

  it('serves no meta tools when metaTools is false', () => {
    expect(builtins('dev', ['shell'], { metaTools: false })).toEqual(['exec'])
  })

  it('serves exec and run_script only when an active skill’s pattern names them (either form)', () => {
    expect(builtins('dev', ['shell'])).toEqual([...META, 'exec'])
    expect(builtins('dev', ['scripts'])).toEqual([...META, 'run_script'])
  })

  it('"*" takes in exec and run_script, but memory tools still need a grant', () => {
    expect(builtins('dev', ['everything'])).toEqual([...META, 'exec', 'run_script'])
  })

  it('serves the memory tools when an active skill grants memory, and never by pattern alone', () => {
    expect(builtins('dev', ['notes'])).toEqual([...META, 'save_memory', 'recall_memory', 'list_memories'])
    expect(builtins('dev', ['memtools'])).toEqual(META)
    expect(policy.filter('dev', new Set(['memtools'])).toolVisible(BUILTIN_SERVER, 'save_memory')).toBe(false)
  })

  it('lets deny remove built-ins (never the meta tools)', () => {
    expect(builtins('locked', ['shell', 'notes'])).toEqual([...META, 'save_memory', 'list_memories'])
  })

  it('narrows to the built-ins this process can run', () => {
    expect(builtins('dev', ['shell', 'scripts'], { available: new Set(['run_script']) })).toEqual([
      ...META,
      'run_script',
    ])
  })

  it('strict loading disables a skill naming a built-in that does not exist', () => {
    const p = policyOf([skill('typo', { allowedRoles: ['dev'], allowedTools: ['mycelium:exce'] })])
    expect(p.disabled.get('typo')?.reasons[0]).toMatch(
      /^"mycelium:exce": the built-in server "mycelium" has no tool "exce" \(built-ins: list_skills, .*exec/,
    )
    expect(
      policyOf([skill('ok', { allowedRoles: ['dev'], allowedTools: ['mycelium:*', 'mycelium:list_memories'] })])
        .disabled.size,
    ).toBe(0)
  })
})

describe('strict loading, re-run as the catalogue changes', () => {
  const skills = [skill('git-user', { allowedRoles: ['dev'], allowedTools: ['git:log', 'git:blame', 'git:status_*'] })]
  const at = (cat: Record<string, string[]>) => policyOf(skills, {}, cat)

  it('keeps the skill while git’s tool list is unknown (not started, crashed)', () => {
    expect(at({ fs: ['read_file'] }).disabled.size).toBe(0)
    expect(
      at({ fs: ['read_file'] })
        .reachable('dev')
        .map((s) => s.name),
    ).toEqual(['git-user'])
  })

  it('disables it once git lists its tools without blame, and names only the missing exact tool', () => {
    const p = at({ git: ['log'] })
    expect(p.disabled.get('git-user')).toEqual({
      skill: 'git-user',
      reasons: ['"git:blame": server "git" has no tool "blame"'],
    })
    expect(p.reachable('dev')).toEqual([])
    expect(p.filter('dev', new Set(['git-user'])).toolVisible('git', 'log')).toBe(false)
  })

  it('enables it again when git lists blame (a list_changed), and when git goes down again', () => {
    expect(at({ git: ['log', 'blame'] }).disabled.size).toBe(0)
    expect(at({}).disabled.size).toBe(0)
  })

  it('an empty tool list is a known list: exact names then fail', () => {
    expect(at({ git: [] }).disabled.has('git-user')).toBe(true)
  })

  it('disables a skill as a whole: none of its tools show, other skills are untouched', () => {
    const p = policyOf([
      skill('half', { allowedRoles: ['dev'], allowedTools: ['fs:read_file', 'fs:nope'] }),
      skill('fine', { allowedRoles: ['dev'], allowedTools: ['git:log'] }),
    ])
    const f = p.filter('dev', new Set(['half', 'fine']))
    expect(f.toolVisible('fs', 'read_file')).toBe(false)
    expect(f.toolVisible('git', 'log')).toBe(true)
    expect([...f.active]).toEqual(['fine'])
  })

  it('reports every reason of a skill, in pattern order', () => {
    const p = policyOf([
      skill('many', {
        allowedRoles: ['dev'],
        allowedTools: ['slack:post', 'fs:nope', 'fs:', 'git:log'],
        hostTools: ['Bash(git:*)'],
      }),
    ])
    expect(p.disabled.get('many')!.reasons).toEqual([
      '"slack:post" names server "slack", which is not configured',
      '"fs:nope": server "fs" has no tool "nope"',
      'pattern "fs:" names no tool after the server (write "fs:*" for all of them)',
      'allowed-tools entry "Bash(git:*)" names a host tool, not a Mycelium pattern (server:tool)',
    ])
  })
})

describe('deny lists', () => {
  const skills = [skill('all-fs', { allowedRoles: ['dev'], allowedTools: ['fs:*', 'git:*'] })]

  it('deny wins over allow in both pattern forms and with globs', () => {
    const p = policyOf(skills, { dev: { deny: ['fs__write_*', 'git:log'] } })
    const f = p.filter('dev', new Set(['all-fs']))
    expect([f.toolVisible('fs', 'read_file'), f.toolVisible('fs', 'write_file'), f.toolVisible('git', 'log')]).toEqual([
      true,
      false,
      false,
    ])
    expect(f.serverReached('git')).toBe(true)
  })

  it('"*" in deny hides everything, and every server', () => {
    const f = policyOf(skills, { dev: { deny: ['*'] } }).filter('dev', new Set(['all-fs']))
    expect(f.toolVisible('fs', 'read_file')).toBe(false)
    expect(f.serverReached('fs')).toBe(false)
  })

  it('reports deny patterns that do not parse, inherited ones included', () => {
    const p = policyOf(skills, { base: { deny: ['fs:', 'nothere__x'] }, dev: { inherits: 'base', deny: ['git:log'] } })
    expect(p.denyProblems('dev')).toEqual([
      'pattern "fs:" names no tool after the server (write "fs:*" for all of them)',
      'pattern "nothere__x" names no configured server ("nothere" is not one): write it as server:tool',
    ])
    expect(p.denyProblems('unknown-role')).toEqual([])
  })
})

describe('servers a principal touches', () => {
  it('follows the active skills’ patterns, per server', () => {
    const p = policyOf([
      skill('a', { allowedRoles: ['dev'], allowedTools: ['fs:read_*'] }),
      skill('b', { allowedRoles: ['dev'], allowedTools: ['*'] }),
    ])
    const f = p.filter('dev', new Set(['a']))
    expect([f.serverReached('fs'), f.serverReached('git')]).toEqual([true, false])
    expect(p.filter('dev', new Set(['b'])).serverReached('git')).toBe(true)
    expect(p.filter('dev', new Set()).serverReached('fs')).toBe(false)
  })
})

describe('a large catalogue', () => {
  // How fast: npm run bench (policy: pure filter of 10,000 tools), against its target; a test asserts no duration.
  it('filters 10,000 tools against 200 active skills and a deny, per server and pattern', () => {
    const servers = Array.from({ length: 50 }, (_, i) => `s${i}`)
    const cat: Record<string, string[]> = {}
    const tools: Array<[string, string]> = []
    for (let i = 0; i < 10_000; i++) {
      const s = servers[i % 50]!
      const t = `${['read', 'write', 'list', 'get'][i % 4]}_thing_${i}`
      ;(cat[s] ??= []).push(t)
      tools.push([s, t])
    }
    const skills = Array.from({ length: 200 }, (_, k) =>
      skill(`k${k}`, {
        allowedRoles: ['dev'],
        allowedTools: [
          ...[0, 1, 2, 3, 4].map((j) => tools[(k * 37 + j * 101) % 10_000]!.join(':')),
          `s${k % 50}__${['read', 'get'][k % 2]}_*`,
        ],
      }),
    )
    const p = policyOf(skills, { dev: { deny: ['s1:write_*'] } }, cat, servers)
    expect(p.disabled.size).toBe(0)
    const f = p.filter('dev', new Set(skills.map((s) => s.name)))
    const visible = tools.filter(([s, t]) => f.toolVisible(s, t))
    expect(visible.length).toBeGreaterThan(1000)
    expect(visible.length).toBeLessThan(10_000)
    // The deny wins over every skill; a read_* pattern reaches its server's read tools.
    expect(visible.some(([s, t]) => s === 's1' && t.startsWith('write_'))).toBe(false)
    expect(f.toolVisible('s0', 'read_thing_0')).toBe(true)
  })
})
