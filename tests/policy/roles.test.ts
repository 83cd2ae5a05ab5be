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
    const r = roles([skill('a', { allowedRoles: ['dev'] }), skill('b', { allowedRoles: ['dev'] })], {
      dev: { allowedSkills: ['a', 'nonexistent'] },
    })
    expect([...r.get('dev')!.skills]).toEqual(['a'])
  })

  it('inherits the parent’s skills and deny patterns through a chain', () => {
    const r = roles(
      [
        skill('a', { allowedRoles: ['base'] }),
        skill('b', { allowedRoles: ['mid'] }),
        skill('c', { allowedRoles: ['top'] }),
      ],
      {
        base: { deny: ['x:one'] },
        mid: { inherits: 'base', deny: ['x:two'] },
        top: { inherits: 'mid' },
      },
    )
    expect([...r.get('top')!.skills].sort()).toEqual(['a', 'b', 'c'])
    expect(r.get('top')!.deny).toEqual(['x:one', 'x:two'])
    expect(r.get('top')!.chain).toEqual(['top', 'mid', 'base'])
  })

  it('applies a child’s cap to inherited skills too', () => {
    const r = roles([skill('a', { allowedRoles: ['base'] }), skill('b', { allowedRoles: ['base'] })], {
      limited: { inherits: 'base', allowedSkills: ['b'] },
    })
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
    expect(!r.ok && r.error).toMatch(
      /roles\.definitions\.lead\.inherits: unknown role "develper" \(known roles: dev, lead\)/,
    )
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
    expect(chooseRole({ env: 'root' }, r)).toEqual({
      ok: false,
      error: 'unknown role "root" (from MYCELIUM_ROLE); roles: dev, guest',
    })
  })
  it('needs a choice when there are several roles, and takes the only one otherwise', () => {
    expect(chooseRole({}, r).ok).toBe(false)
    expect(chooseRole({}, roles([skill('s', { allowedRoles: ['solo'] })]))).toEqual({ ok: true, role: 'solo' })
  })
})

describe('resolveRoles: more shapes', () => {
  it('names only the cycle when a chain runs into one', () => {
    const r = resolveRoles([], defs({ d: { inherits: 'a' }, a: { inherits: 'b' }, b: { inherits: 'a' } }))
    expect(!r.ok && r.error).toMatch(/inheritance cycle a → b → a \(remove one "inherits"\)/)
    expect(!r.ok && r.error).not.toMatch(/d →/)
  })

  it('lets a parent’s cap limit what it passes on, and the child add its own skills', () => {
    const r = roles(
      [
        skill('a', { allowedRoles: ['base'] }),
        skill('b', { allowedRoles: ['base'] }),
        skill('c', { allowedRoles: ['child'] }),
      ],
      {
        base: { allowedSkills: ['a'] },
        child: { inherits: 'base' },
      },
    )
    expect([...r.get('base')!.skills]).toEqual(['a'])
    expect([...r.get('child')!.skills].sort()).toEqual(['a', 'c'])
    expect(r.get('child')!.cap).toBeUndefined()
  })

  it('resolves a long chain in any definition order', () => {
    const d: Record<string, RoleDefinitionInput> = {}
    for (let i = 1; i < 30; i++) d[`r${i}`] = { inherits: `r${i - 1}`, deny: [`s:t${i}`] }
    d.r0 = {}
    const r = roles([skill('root', { allowedRoles: ['r0'] })], d)
    expect([...r.get('r29')!.skills]).toEqual(['root'])
    expect(r.get('r29')!.deny).toHaveLength(29)
    expect(r.get('r29')!.chain).toHaveLength(30)
  })

  it('a role can exist through a definition alone, and "*" skills reach it', () => {
    const r = roles([skill('common', { allowedRoles: ['*'] })], { auditor: { deny: ['fs:*'] } })
    expect([...r.get('auditor')!.skills]).toEqual(['common'])
    expect(r.get('auditor')!.sources).toEqual(['definition'])
  })

  it('keeps role names such as __proto__ and constructor as plain names', () => {
    const r = roles([skill('a', { allowedRoles: ['__proto__', 'constructor'] })])
    expect([...r.keys()]).toEqual(['__proto__', 'constructor'])
    expect(chooseRole({ flag: 'toString' }, r)).toEqual({
      ok: false,
      error: 'unknown role "toString" (from --role); roles: __proto__, constructor',
    })
  })

  it('rejects a definition named "*"', () => {
    const r = resolveRoles([], defs({ '*': { deny: ['x:y'] } }))
    expect(!r.ok && r.error).toMatch(/"\*" is not a role name/)
  })

  it('warns about an allowedSkills entry that names no skill', () => {
    const r = resolveRoles([skill('a', { allowedRoles: ['dev'] })], defs({ dev: { allowedSkills: ['a', 'typo'] } }))
    expect(r.ok && r.warnings).toEqual([
      'roles.definitions.dev.allowedSkills: no skill is named "typo" (remove it or fix the name)',
    ])
  })

  it('files each warning under the role definition it is about', () => {
    const r = resolveRoles(
      [skill('a', { allowedRoles: ['dev'] })],
      defs({
        dev: { allowedSkills: ['typo'] },
        ops: { allowedSkills: ['a', 'gone', 'lost'] },
        lead: { inherits: 'dev' },
      }),
    )
    if (!r.ok) throw new Error(r.error)
    expect(Object.fromEntries(r.warningsByRole)).toEqual({
      dev: ['roles.definitions.dev.allowedSkills: no skill is named "typo" (remove it or fix the name)'],
      ops: [
        'roles.definitions.ops.allowedSkills: no skill is named "gone" (remove it or fix the name)',
        'roles.definitions.ops.allowedSkills: no skill is named "lost" (remove it or fix the name)',
      ],
    })
    expect([...r.warningsByRole.values()].flat()).toEqual(r.warnings)
  })

  it('an empty cap leaves the role with no skills', () => {
    const r = roles([skill('a', { allowedRoles: ['dev'] })], { dev: { allowedSkills: [] } })
    expect(r.get('dev')!.skills.size).toBe(0)
  })
})
