import { describe, expect, it } from 'vitest'
import { decideActivation, decideDeactivation, initialSkills } from '../../src/policy/escalation.js'
import { explainTool } from '../../src/policy/explain.js'
import { Policy } from '../../src/policy/policy.js'
import { resolveRoles, type RoleDefinitionInput } from '../../src/policy/roles.js'
import { facts, skill } from './helpers.js'

const catalogue = {
  fs: ['read_file', 'write_file', 'list'],
  git: ['log', 'diff', 'push'],
  db: ['query', 'drop_table', 'drop_index'],
}

function build(
  skills: ReturnType<typeof skill>[],
  defs: Record<string, RoleDefinitionInput> = {},
  cat: Record<string, string[]> = catalogue,
  strict = true,
) {
  const r = resolveRoles(skills, new Map(Object.entries(defs)))
  if (!r.ok) throw new Error(r.error)
  return new Policy({
    skills,
    roles: r.roles,
    servers: new Set(['fs', 'git', 'db']),
    separator: '__',
    catalogue: facts(cat),
    strict,
  })
}

const skills = [
  skill('common', { allowedRoles: ['*'], allowedTools: ['fs:list'], protected: true }),
  skill('reader', { allowedRoles: ['guest', 'dev'], allowedTools: ['fs:read_*', 'git__log'] }),
  skill('writer', { allowedRoles: ['dev'], allowedTools: ['fs:*', 'git:*'] }),
  skill('dba', { allowedRoles: ['dev'], allowedTools: ['db:*'], grants: { memory: 'team', memoryTeamRoles: ['dev'] } }),
]
const defs = {
  lead: { inherits: 'dev', deny: ['db:drop_*', 'git__push'] },
  intern: { inherits: 'dev', allowedSkills: ['common', 'reader'] },
}

describe('visibility', () => {
  const policy = build(skills, defs)
  const visible = (role: string, active: string[]) => {
    const f = policy.filter(role, new Set(active))
    return Object.entries(catalogue).flatMap(([s, tools]) =>
      tools.filter((t) => f.toolVisible(s, t)).map((t) => `${s}:${t}`),
    )
  }

  it('shows the union of the active skills’ tools, nothing else', () => {
    expect(visible('guest', ['common'])).toEqual(['fs:list'])
    expect(visible('guest', ['common', 'reader'])).toEqual(['fs:read_file', 'fs:list', 'git:log'])
    expect(visible('dev', ['writer'])).toEqual([
      'fs:read_file',
      'fs:write_file',
      'fs:list',
      'git:log',
      'git:diff',
      'git:push',
    ])
  })

  it('ignores active skills the role cannot reach', () => {
    expect(visible('guest', ['common', 'writer', 'dba'])).toEqual(['fs:list'])
  })

  it('lets deny win over allow, inherited from the chain', () => {
    expect(visible('lead', ['writer', 'dba'])).toEqual([
      'fs:read_file',
      'fs:write_file',
      'fs:list',
      'git:log',
      'git:diff',
      'db:query',
    ])
  })

  it('caps what an inheriting role reaches', () => {
    expect(policy.reachable('intern').map((s) => s.name)).toEqual(['common', 'reader'])
    expect(visible('intern', ['writer'])).toEqual([])
  })

  it('reaches servers only through active skills, and not when deny removes the whole server', () => {
    const f = policy.filter('guest', new Set(['common']))
    expect(f.serverReached('fs')).toBe(true)
    expect(f.serverReached('git')).toBe(false)
    const blocked = build(skills, { dev: { deny: ['db:*'] } })
    expect(blocked.filter('dev', new Set(['dba'])).serverReached('db')).toBe(false)
  })

  it('reports the strongest memory grant of the active skills', () => {
    expect(policy.filter('dev', new Set(['common'])).memory).toBe('none')
    expect(policy.filter('dev', new Set(['dba', 'common'])).memory).toBe('team')
  })

  it('caches filters per principal', () => {
    expect(policy.filter('dev', new Set(['reader', 'common']))).toBe(
      policy.filter('dev', new Set(['common', 'reader'])),
    )
  })
})

describe('strict loading', () => {
  it('disables a skill naming a server that is not configured', () => {
    const p = build([skill('s', { allowedRoles: ['dev'], allowedTools: ['fs:list', 'slack:post'] })])
    expect(p.disabled.get('s')?.reasons).toEqual(['"slack:post" names server "slack", which is not configured'])
    expect(p.reachable('dev')).toEqual([])
  })

  it('disables a skill naming an exact tool its server does not have', () => {
    const p = build([skill('s', { allowedRoles: ['dev'], allowedTools: ['fs:read_fil'] })])
    expect(p.disabled.get('s')?.reasons).toEqual(['"fs:read_fil": server "fs" has no tool "read_fil"'])
  })

  it('does not disable for a server whose tool list is not known yet (not started or crashed)', () => {
    const p = build([skill('s', { allowedRoles: ['dev'], allowedTools: ['git:anything'] })], {}, { fs: ['list'] })
    expect(p.disabled.has('s')).toBe(false)
  })

  it('accepts globs that match nothing (policy check reports them instead)', () => {
    expect(build([skill('s', { allowedRoles: ['dev'], allowedTools: ['fs:nothing_*'] })]).disabled.size).toBe(0)
  })

  it('disables a skill with host tools or a pattern that does not parse', () => {
    const p = build([
      skill('h', { allowedRoles: ['dev'], hostTools: ['Read'] }),
      skill('b', { allowedRoles: ['dev'], allowedTools: ['no_server'] }),
    ])
    expect(p.disabled.get('h')?.reasons[0]).toMatch(/host tool/)
    expect(p.disabled.get('b')?.reasons[0]).toMatch(/names no configured server/)
  })

  it('only reports when strict is off', () => {
    const p = build([skill('s', { allowedRoles: ['dev'], allowedTools: ['fs:read_fil'] })], {}, catalogue, false)
    expect(p.disabled.size).toBe(0)
    expect(p.reachable('dev').map((s) => s.name)).toEqual(['s'])
  })

  it('built-in mycelium tools are always known', () => {
    expect(build([skill('s', { allowedRoles: ['dev'], allowedTools: ['mycelium:exec'] })]).disabled.size).toBe(0)
  })
})

describe('escalation', () => {
  const policy = build(skills, defs)
  const state = (role: string, active: string[], mode: 'auto' | 'ask' | 'manual' = 'auto') => ({
    role,
    active: new Set(active),
    mode,
    protectedSkills: new Set<string>(),
  })

  it('activates a reachable skill in auto mode', () => {
    const d = decideActivation(policy, state('dev', ['common']), 'writer', 'agent')
    expect(d.ok && d.action === 'activate' && [...d.active].sort()).toEqual(['common', 'writer'])
  })

  it('does nothing for an active skill', () => {
    expect(decideActivation(policy, state('dev', ['writer']), 'writer', 'agent')).toMatchObject({
      ok: true,
      action: 'none',
    })
  })

  it('answers unreachable, disabled and nonexistent skills identically', () => {
    const strictPolicy = build(
      [...skills, skill('broken', { allowedRoles: ['guest'], allowedTools: ['fs:nope'] })],
      defs,
    )
    const msg = (name: string) =>
      JSON.stringify(decideActivation(strictPolicy, state('guest', []), name, 'agent')).replace(name, 'X')
    expect(msg('writer')).toBe(msg('no-such-skill'))
    expect(msg('broken')).toBe(msg('no-such-skill'))
    expect(JSON.stringify(decideDeactivation(strictPolicy, state('guest', []), 'writer')).replace('writer', 'X')).toBe(
      msg('no-such-skill'),
    )
  })

  it('asks in ask mode, refuses the agent in manual mode, and lets a person through', () => {
    expect(decideActivation(policy, state('dev', [], 'ask'), 'writer', 'agent')).toEqual({ ok: true, action: 'ask' })
    expect(decideActivation(policy, state('dev', [], 'manual'), 'writer', 'agent')).toMatchObject({
      ok: false,
      error: { code: 'manual_only' },
    })
    expect(decideActivation(policy, state('dev', [], 'manual'), 'writer', 'person')).toMatchObject({
      ok: true,
      action: 'activate',
    })
    expect(decideActivation(policy, state('dev', [], 'ask'), 'writer', 'person')).toMatchObject({
      ok: true,
      action: 'activate',
    })
  })

  it('refuses to deactivate protected skills (config list or the skill’s own flag)', () => {
    expect(decideDeactivation(policy, state('dev', ['common']), 'common')).toMatchObject({
      ok: false,
      error: { code: 'protected' },
    })
    expect(
      decideDeactivation(policy, { ...state('dev', ['reader']), protectedSkills: new Set(['reader']) }, 'reader'),
    ).toMatchObject({ ok: false, error: { code: 'protected' } })
    const d = decideDeactivation(policy, state('dev', ['reader', 'writer']), 'writer')
    expect(d.ok && d.action === 'activate' && [...d.active]).toEqual(['reader'])
  })

  it('starts sessions with default plus requested skills, kept to what the role reaches', () => {
    expect([...initialSkills(policy, 'guest', ['common', 'writer'], ['reader', 'nope'])]).toEqual(['common', 'reader'])
  })
})

describe('explain', () => {
  const policy = build(skills, defs)
  it('names the skill that grants a visible tool', () => {
    const e = explainTool(policy, {
      server: 'fs',
      tool: 'read_file',
      role: 'guest',
      active: new Set(['reader']),
      inCatalogue: true,
    })
    expect(e.visible).toBe(true)
    expect(e.steps).toContainEqual({
      rule: 'skill reader',
      verdict: 'allows',
      detail: 'active, and allowedTools has fs:read_*',
    })
  })
  it('names the deny pattern that hides a tool', () => {
    const e = explainTool(policy, {
      server: 'db',
      tool: 'drop_table',
      role: 'lead',
      active: new Set(['dba']),
      inCatalogue: true,
    })
    expect(e.visible).toBe(false)
    expect(e.steps).toContainEqual({
      rule: 'role lead deny',
      verdict: 'denies',
      detail: '"db:drop_*" matches (deny wins over allow); deny lists of lead → dev apply',
    })
  })
  it('says when a skill would grant it once activated, or is out of the role’s reach', () => {
    const e = explainTool(policy, {
      server: 'db',
      tool: 'query',
      role: 'intern',
      active: new Set(['common']),
      inCatalogue: true,
    })
    expect(e.visible).toBe(false)
    expect(e.steps.find((s) => s.rule === 'skill dba')?.detail).toMatch(
      /does not reach this skill \(not in its allowedSkills cap\)/,
    )
  })
})
