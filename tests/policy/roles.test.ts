import { describe, expect, it } from 'vitest'
import { chooseRole, resolveRoles, type RoleDefinitionInput } from '../../src/policy/roles.js'
import { skill } from './helpers.js'

const defs = (o: Record<string, RoleDefinitionInput>) => new Map(Object.entries(o))
function roles(skills: ReturnType<typeof skill>[], d: Record<string, RoleDefinitionInput> = {}) {
  const r = resolveRoles(skills, defs(d))
  if (!r.ok) throw new Error(r.error)
  return r.roles
}

describe('resolveRoles', () => {
  it('derives roles from the skills that name them', () => {
    const r = roles([skill('a', { allowedRoles: ['dev', 'guest'] }), skill('b', { allowedRoles: ['dev'] })])
    expect([...r.keys()]).toEqual(['dev', 'guest'])
    expect([...r.get('dev')!.skills].sort()).toEqual(['a', 'b'])
    expect([...r.get('guest')!.skills]).toEqual(['a'])
    expect(r.get('dev')!.sources).toEqual(['skill a', 'skill b'])
  })

  it('expands "*" to every named role in a second pass, including roles named later and by definitions', () => {
    const r = roles([skill('common', { allowedRoles: ['*'] }), skill('x', { allowedRoles: ['dev'] })], { ops: {} })
    for (const role of ['dev', 'ops']) expect(r.get(role)!.skills.has('common')).toBe(true)
    expect(r.has('*')).toBe(false)
  })

  it('a skill with only "*" creates no role by itself', () => {
    expect([...roles([skill('common', { allowedRoles: ['*'] })]).keys()]).toEqual([])
  })

  it('caps a role with allowedSkills', () => {
    const r = roles([skill('a', { allowedRoles: ['dev'] }), skill('b', { allowedRoles: ['dev'] })], { dev: { allowedSkills: ['a', 'nonexistent'] } })
    expect([...r.get('dev')!.skills]).toEqual(['a'])
  })

  it('inherits the parent’s skills and deny patterns through a chain', () => {
    const r = roles([skill('a', { allowedRoles: ['base'] }), skill('b', { allowedRoles: ['mid'] }), skill('c', { allowedRoles: ['top'] })], {
      base: { deny: ['x:one'] },
      mid: { inherits: 'base', deny: ['x:two'] },
      top: { inherits: 'mid' },
    })
    expect([...r.get('top')!.skills].sort()).toEqual(['a', 'b', 'c'])
    expect(r.get('top')!.deny).toEqual(['x:one', 'x:two'])
    expect(r.get('top')!.chain).toEqual(['top', 'mid', 'base'])
  })

  it('applies a child’s cap to inherited skills too', () => {
    const r = roles([skill('a', { allowedRoles: ['base'] }), skill('b', { allowedRoles: ['base'] })], { limited: { inherits: 'base', allowedSkills: ['b'] } })
    expect([...r.get('limited')!.skills]).toEqual(['b'])
  })

  it('rejects a cycle, naming it', () => {
    const r = resolveRoles([], defs({ a: { inherits: 'b' }, b: { inherits: 'c' }, c: { inherits: 'a' } }))
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.error).toMatch(/inheritance cycle a → b → c → a/)
  })

  it('rejects a self-cycle', () => {
    const r = resolveRoles([], defs({ a: { inherits: 'a' } }))
    expect(!r.ok && r.error).toMatch(/cycle a → a/)
  })

  it('rejects an unknown parent, listing the known roles', () => {
    const r = resolveRoles([skill('s', { allowedRoles: ['dev'] })], defs({ lead: { inherits: 'develper' } }))
    expect(!r.ok && r.error).toMatch(/roles\.definitions\.lead\.inherits: unknown role "develper" \(known roles: dev, lead\)/)
  })
})

describe('chooseRole', () => {
  const r = roles([skill('s', { allowedRoles: ['dev', 'guest'] })])
  it('prefers --role, then MYCELIUM_ROLE, then roles.default', () => {
    expect(chooseRole({ flag: 'dev', env: 'guest', configDefault: 'guest' }, r)).toEqual({ ok: true, role: 'dev' })
    expect(chooseRole({ env: 'guest', configDefault: 'dev' }, r)).toEqual({ ok: true, role: 'guest' })
    expect(chooseRole({ configDefault: 'dev' }, r)).toEqual({ ok: true, role: 'dev' })
  })
  it('names the source of an unknown role and lists the known ones', () => {
    expect(chooseRole({ env: 'root' }, r)).toEqual({ ok: false, error: 'unknown role "root" (from MYCELIUM_ROLE); roles: dev, guest' })
  })
  it('needs a choice when there are several roles, and takes the only one otherwise', () => {
    expect(chooseRole({}, r).ok).toBe(false)
    expect(chooseRole({}, roles([skill('s', { allowedRoles: ['solo'] })]))).toEqual({ ok: true, role: 'solo' })
  })
})
