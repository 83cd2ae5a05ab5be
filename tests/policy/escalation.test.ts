import { describe, expect, it } from 'vitest'
import {
  decideActivation,
  decideDeactivation,
  estimateSchemaTokens,
  initialSkills,
  previewActivation,
  unknownSkill,
  type EscalationMode,
} from '../../src/policy/escalation.js'
import { Policy } from '../../src/policy/policy.js'
import { resolveRoles } from '../../src/policy/roles.js'
import { facts, skill } from './helpers.js'

const cat = { fs: ['read_file', 'write_file', 'list'], git: ['log', 'diff'] }
const skills = [
  skill('common', { allowedRoles: ['*'], allowedTools: ['fs:list'], protected: true }),
  skill('reader', { allowedRoles: ['guest', 'dev'], allowedTools: ['fs:read_*'] }),
  skill('writer', { allowedRoles: ['dev'], allowedTools: ['fs:*', 'git:*'] }),
  skill('secret-ops', { allowedRoles: ['admin'], allowedTools: ['git:*'] }),
  skill('broken', { allowedRoles: ['guest', 'dev'], allowedTools: ['fs:missing'] }),
]
const roles = resolveRoles(skills, new Map([['intern', { inherits: 'dev', allowedSkills: ['common', 'reader'] }]]))
if (!roles.ok) throw new Error(roles.error)
const policy = new Policy({
  skills,
  roles: roles.roles,
  servers: new Set(['fs', 'git']),
  separator: '__',
  catalogue: facts(cat),
})
const state = (role: string, active: string[], mode: EscalationMode = 'auto', protectedSkills: string[] = []) => ({
  role,
  active: new Set(active),
  mode,
  protectedSkills: new Set(protectedSkills),
})
const tools = Object.entries(cat).flatMap(([server, names]) =>
  names.map((name) => ({
    server,
    name,
    def: { name: `${server}__${name}`, description: `does ${name}`, inputSchema: { type: 'object' } },
  })),
)

describe('hidden and nonexistent skills get one answer', () => {
  // Skills the guest cannot reach (another role's, capped, disabled) and names that never existed.
  const hidden = ['writer', 'secret-ops', 'broken']
  const bogus = [
    '',
    ' ',
    'nope',
    'WRITER',
    'Writer',
    'writer ',
    ' writer',
    'writer\u0000',
    'wrіter' /* Cyrillic і */,
    'fs:writer',
    'mycelium__writer',
    'x'.repeat(5000),
    '__proto__',
    'constructor',
    'common/../writer',
    '*',
  ]
  const answer = (name: string, fn: 'activate' | 'deactivate', mode: EscalationMode) =>
    JSON.stringify(
      fn === 'activate'
        ? decideActivation(policy, state('guest', ['common'], mode), name, 'agent')
        : decideDeactivation(policy, state('guest', ['common'], mode), name),
    )

  it.each(['auto', 'ask', 'manual'] as const)('in %s mode, byte for byte apart from the name sent', (mode) => {
    const reference = answer('never-existed', 'activate', mode)
    expect(reference).toContain('unknown_skill')
    // The reference answer with the probe's name put in its place (JSON-escaped, as it would be sent).
    const expected = (name: string) => reference.split('never-existed').join(JSON.stringify(name).slice(1, -1))
    for (const name of [...hidden, ...bogus]) {
      expect(answer(name, 'activate', mode), name).toBe(expected(name))
      expect(answer(name, 'deactivate', mode), name).toBe(expected(name))
    }
  })

  it('never names another skill in the message', () => {
    const msg = unknownSkill('anything').error.message
    for (const s of skills) expect(msg).not.toContain(s.name)
  })

  it('the intern’s cap hides the dev skills it would inherit', () => {
    expect(decideActivation(policy, state('intern', []), 'writer', 'agent')).toEqual(unknownSkill('writer'))
    expect(decideActivation(policy, state('intern', []), 'reader', 'agent')).toMatchObject({
      ok: true,
      action: 'activate',
    })
  })

  it('an unknown role reaches nothing', () => {
    expect(decideActivation(policy, state('nobody', []), 'common', 'person')).toEqual(unknownSkill('common'))
  })
})

describe('modes', () => {
  it('auto: the agent activates; the new set keeps the old skills', () => {
    const d = decideActivation(policy, state('dev', ['common', 'reader']), 'writer', 'agent')
    expect(d.ok && d.action === 'activate' && [...d.active]).toEqual(['common', 'reader', 'writer'])
  })

  it('ask: the agent needs approval, a person does not, an active skill needs nothing', () => {
    expect(decideActivation(policy, state('dev', [], 'ask'), 'writer', 'agent')).toEqual({ ok: true, action: 'ask' })
    expect(decideActivation(policy, state('dev', ['writer'], 'ask'), 'writer', 'agent')).toMatchObject({
      ok: true,
      action: 'none',
    })
  })

  it('manual: the agent is refused with a message naming only the skill it asked for', () => {
    const d = decideActivation(policy, state('dev', [], 'manual'), 'writer', 'agent')
    expect(d).toEqual({
      ok: false,
      error: {
        code: 'manual_only',
        message:
          'Skill writer can only be activated by a person in this session (escalation: manual). Ask the user to activate it.',
      },
    })
  })

  it('de-escalation is allowed in every mode (it only ever narrows)', () => {
    for (const mode of ['auto', 'ask', 'manual'] as const) {
      const d = decideDeactivation(policy, state('dev', ['reader', 'writer'], mode), 'writer')
      expect(d.ok && d.action === 'activate' && [...d.active]).toEqual(['reader'])
    }
  })

  it('deactivating an inactive reachable skill changes nothing', () => {
    expect(decideDeactivation(policy, state('dev', ['reader']), 'writer')).toMatchObject({ ok: true, action: 'none' })
  })
})

describe('protected skills', () => {
  it('refuse deactivation by flag or by config, for agent-driven calls in any mode', () => {
    for (const mode of ['auto', 'ask', 'manual'] as const) {
      expect(decideDeactivation(policy, state('dev', ['common'], mode), 'common')).toEqual({
        ok: false,
        error: { code: 'protected', message: 'Skill common is protected and stays active for this session.' },
      })
      expect(decideDeactivation(policy, state('dev', ['reader'], mode, ['reader']), 'reader')).toMatchObject({
        ok: false,
        error: { code: 'protected' },
      })
    }
  })

  it('a protected name the role cannot reach still answers as unknown', () => {
    expect(decideDeactivation(policy, state('guest', ['common'], 'auto', ['writer']), 'writer')).toEqual(
      unknownSkill('writer'),
    )
  })
})

describe('initial skills', () => {
  it('are (defaults + requested) ∩ reachable, disabled and capped ones dropped', () => {
    expect([...initialSkills(policy, 'dev', ['common', 'broken'], ['writer', 'secret-ops', 'nope'])]).toEqual([
      'common',
      'writer',
    ])
    expect([...initialSkills(policy, 'intern', ['common'], ['writer', 'reader'])]).toEqual(['common', 'reader'])
    expect([...initialSkills(policy, 'nobody', ['common'], [])]).toEqual([])
  })
})

describe('preview', () => {
  it('lists the tools activating a skill adds and estimates their tokens as JSON chars / 4', () => {
    const r = previewActivation(policy, 'dev', new Set(['common', 'reader']), 'writer', tools)
    expect(r).toMatchObject({
      ok: true,
      skill: 'writer',
      alreadyActive: false,
      added: ['fs:write_file', 'git:log', 'git:diff'],
      removed: [],
    })
    const added = tools.filter((t) => ['write_file', 'log', 'diff'].includes(t.name)).map((t) => t.def)
    expect(r.ok && r.addedTokens).toBe(Math.ceil(added.reduce((n, d) => n + JSON.stringify(d).length, 0) / 4))
    expect(r.ok && r.addedTokens).toBeGreaterThan(0)
  })

  it('adds nothing for an active skill, and ignores active skills the role cannot reach', () => {
    expect(previewActivation(policy, 'dev', new Set(['writer']), 'writer', tools)).toMatchObject({
      ok: true,
      alreadyActive: true,
      added: [],
      addedTokens: 0,
    })
    expect(previewActivation(policy, 'guest', new Set(['writer']), 'reader', tools)).toMatchObject({
      ok: true,
      added: ['fs:read_file'],
    })
  })

  it('answers a hidden skill exactly like a nonexistent one', () => {
    expect(previewActivation(policy, 'guest', new Set(), 'writer', tools)).toEqual({
      ok: false,
      error: unknownSkill('writer').error.message,
    })
    expect(previewActivation(policy, 'guest', new Set(), 'broken', tools)).toEqual({
      ok: false,
      error: unknownSkill('broken').error.message,
    })
  })

  it('estimates zero tokens for nothing', () => {
    expect(estimateSchemaTokens([])).toBe(0)
    expect(estimateSchemaTokens(['abcd'])).toBe(2) // "abcd" with quotes is 6 chars
  })
})
