import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/parse.js'
import { isRoleName } from '../../src/config/role-name.js'
import { buildSkill } from '../../src/policy/skill-definition.js'

const input = { file: '/s/x/SKILL.md', dir: '/s/x', folder: 'x', frontmatter: '', body: '', separator: '__' }

describe('role names (they name memory files)', () => {
  it('letters, digits, "_" and "-" only', () => {
    for (const ok of ['dev', 'qa-lead', 'Team_2', 'a'.repeat(64)]) expect(isRoleName(ok)).toBe(true)
    for (const bad of ['', '..', '../x', 'a/b', 'a\\b', 'a.b', 'a b', 'é', 'a'.repeat(65), '*'])
      expect(isRoleName(bad)).toBe(false)
  })

  it('a skill naming a bad role in allowedRoles or memoryTeamRoles is a problem naming the key ("*" stays allowed)', () => {
    const r = buildSkill(
      {
        name: 'x',
        description: 'd',
        allowedRoles: ['*', 'dev', '../evil'],
        grants: { memory: 'team', memoryTeamRoles: ['ok', 'a/b'] },
      },
      input,
    )
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.problems.map((p) => p.path)).toEqual(['allowedRoles.2', 'grants.memoryTeamRoles.1'])
    expect(r.problems[0]!.message).toMatch(/not a role name/)
  })

  it('the config refuses bad role names in roles.default, roles.definitions and inherits', () => {
    const parse = (roles: unknown) => () =>
      parseConfig({ mcpServers: {}, roles }, { file: 'mycelium.config.json', env: {} })
    expect(parse({ default: '../x' })).toThrow(/roles\.default.*role name/)
    expect(parse({ definitions: { 'a/b': {} } })).toThrow(/roles\.definitions.*role name/)
    expect(parse({ definitions: { a: { inherits: '..' } } })).toThrow(/inherits.*role name/)
    expect(parse({ default: 'dev', definitions: { dev: { inherits: 'base' }, base: {} } })).not.toThrow()
  })
})
