import { describe, expect, it } from 'vitest'
import { mayRead, memoryAccess } from '../../src/policy/memory-access.js'
import { Policy } from '../../src/policy/policy.js'
import { resolveRoles } from '../../src/policy/roles.js'
import { skill } from './helpers.js'

const g = (memory: 'none' | 'isolated' | 'team' | 'all', memoryTeamRoles: string[] = []) => ({
  memory,
  memoryTeamRoles,
})

describe('memoryAccess (pure)', () => {
  it('none: reads nothing', () => {
    const a = memoryAccess('dev', ['dev'], [g('none', ['qa'])])
    expect(a.grant).toBe('none')
    expect(mayRead(a, 'dev')).toBe(false)
  })
  it('isolated: its own role only (team roles of an isolated grant count for nothing)', () => {
    const a = memoryAccess('dev', ['dev'], [g('isolated', ['qa'])])
    expect([mayRead(a, 'dev'), mayRead(a, 'qa')]).toEqual([true, false])
  })
  it('team: own plus the team roles of every team-granting skill, merged', () => {
    const a = memoryAccess('lead', ['lead'], [g('team', ['frontend']), g('team', ['backend']), g('isolated', ['ops'])])
    expect(a.grant).toBe('team')
    expect([...(a.readable as Set<string>)].sort()).toEqual(['backend', 'frontend', 'lead'])
    expect(mayRead(a, 'ops')).toBe(false)
  })
  it('the strongest grant wins: all > team > isolated', () => {
    expect(memoryAccess('x', ['x'], [g('isolated'), g('all'), g('team', ['y'])]).readable).toBe('all')
    expect(memoryAccess('x', ['x'], [g('isolated'), g('team', ['y'])]).grant).toBe('team')
    expect(mayRead(memoryAccess('x', ['x'], [g('all')]), 'anyone')).toBe(true)
  })
  it('a cycle in the inheritance chain gives none', () => {
    const a = memoryAccess('a', ['a', 'b', 'a'], [g('all')])
    expect(a.grant).toBe('none')
    expect(mayRead(a, 'a')).toBe(false)
  })
})

describe('memory access through policy: active skills and inheritance', () => {
  const skills = [
    skill('notes', { allowedRoles: ['base'], grants: { memory: 'isolated', memoryTeamRoles: [] } }),
    skill('team-read', { allowedRoles: ['base'], grants: { memory: 'team', memoryTeamRoles: ['qa'] } }),
    skill('lead-read', { allowedRoles: ['senior'], grants: { memory: 'team', memoryTeamRoles: ['ops'] } }),
    skill('plain', { allowedRoles: ['qa', 'ops'] }),
  ]
  const roles = resolveRoles(skills, new Map([['senior', { inherits: 'base' }]]))
  if (!roles.ok) throw new Error(roles.error)
  const policy = new Policy({
    skills,
    roles: roles.roles,
    servers: new Set(),
    separator: '__',
    catalogue: { toolsOf: () => undefined },
  })

  it('only active skills grant: no active granting skill, no memory tools', () => {
    const f = policy.filter('senior', new Set(['plain']))
    expect(f.memory).toBe('none')
    expect(f.toolVisible('mycelium', 'save_memory')).toBe(false)
  })
  it('an inherited skill grants to the child role, and team roles merge across the chain’s skills', () => {
    const f = policy.filter('senior', new Set(['notes', 'team-read', 'lead-read']))
    expect(f.memory).toBe('team')
    expect(f.toolVisible('mycelium', 'recall_memory')).toBe(true)
    expect([...(f.memoryAccess.readable as Set<string>)].sort()).toEqual(['ops', 'qa', 'senior'])
    expect(f.memoryAccess.role).toBe('senior')
  })
  it('a skill the role does not reach grants nothing', () => {
    expect(policy.filter('base', new Set(['lead-read'])).memory).toBe('none')
  })
})
