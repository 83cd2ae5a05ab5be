import { describe, expect, it } from 'vitest'
import { explainTool } from '../../src/policy/explain.js'
import { BUILTIN_SERVER, Policy, visibleBuiltins } from '../../src/policy/policy.js'
import { resolveRoles } from '../../src/policy/roles.js'
import { facts, skill } from './helpers.js'

const cat = { fs: ['read_file', 'write_file', 'list'], git: ['log', 'push'] }
const skills = [
  skill('common', { allowedRoles: ['*'], allowedTools: ['fs:list'] }),
  skill('reader', { allowedRoles: ['guest', 'dev'], allowedTools: ['fs:read_*', 'git__log'] }),
  skill('writer', { allowedRoles: ['dev'], allowedTools: ['fs:*', 'git:*', 'mycelium:exec'] }),
  skill('notes', { allowedRoles: ['dev'], grants: { memory: 'team', memoryTeamRoles: ['dev'] } }),
  skill('broken', { allowedRoles: ['dev'], allowedTools: ['fs:read_file', 'fs:gone'] }),
]
const roles = resolveRoles(
  skills,
  new Map([
    ['lead', { inherits: 'dev', deny: ['git:push', 'mycelium:exec'] }],
    ['intern', { inherits: 'dev', allowedSkills: ['common', 'reader'] }],
  ]),
)
if (!roles.ok) throw new Error(roles.error)
const policy = new Policy({
  skills,
  roles: roles.roles,
  servers: new Set(['fs', 'git']),
  separator: '__',
  catalogue: facts(cat),
})
const explain = (server: string, tool: string, role: string, active: string[], inCatalogue = true) =>
  explainTool(policy, { server, tool, role, active: new Set(active), inCatalogue })

describe('explainTool', () => {
  it('agrees with the filter for every tool, role and set of active skills', () => {
    const names = skills.map((s) => s.name)
    const subsets = Array.from({ length: 1 << names.length }, (_, m) => names.filter((_, i) => m & (1 << i)))
    const ids: Array<[string, string]> = [
      ...Object.entries(cat).flatMap(([s, ts]) => ts.map((t) => [s, t] as [string, string])),
      [BUILTIN_SERVER, 'exec'],
      [BUILTIN_SERVER, 'run_script'],
      [BUILTIN_SERVER, 'save_memory'],
    ]
    let checked = 0
    for (const role of ['guest', 'dev', 'lead', 'intern']) {
      for (const active of subsets) {
        const f = policy.filter(role, new Set(active))
        for (const [s, t] of ids) {
          expect(explain(s, t, role, active).visible, `${role} [${active}] ${s}:${t}`).toBe(f.toolVisible(s, t))
          checked++
        }
      }
    }
    expect(checked).toBe(4 * 32 * 8)
  })

  it('agrees with visibleBuiltins for the meta tools', () => {
    expect(explain(BUILTIN_SERVER, 'list_skills', 'guest', []).visible).toBe(true)
    expect(
      explainTool(policy, {
        server: BUILTIN_SERVER,
        tool: 'get_context',
        role: 'guest',
        active: new Set(),
        inCatalogue: false,
        metaTools: false,
      }),
    ).toMatchObject({
      visible: false,
      steps: [{ rule: 'meta tools', verdict: 'denies', detail: 'session.metaTools is false' }],
    })
    expect(visibleBuiltins(policy.filter('guest', new Set()), { metaTools: false })).toEqual([])
  })

  it('names the granting skill and the inheriting deny list', () => {
    const e = explain('git', 'push', 'lead', ['writer'])
    expect(e.visible).toBe(false)
    expect(e.steps).toContainEqual({
      rule: 'skill writer',
      verdict: 'allows',
      detail: 'active, and allowedTools has git:*',
    })
    expect(e.steps).toContainEqual({
      rule: 'role lead deny',
      verdict: 'denies',
      detail: '"git:push" matches (deny wins over allow); deny lists of lead → dev apply',
    })
  })

  it('says a strict-loading-disabled skill would grant it, with the reason', () => {
    const e = explain('fs', 'read_file', 'dev', ['broken'])
    expect(e.visible).toBe(false)
    expect(e.steps).toContainEqual({
      rule: 'skill broken',
      verdict: 'info',
      detail: 'listed as active but disabled by strict loading: it counts for nothing',
    })
    expect(e.steps.find((s) => s.rule === 'skill broken' && s.detail.startsWith('would grant'))?.detail).toBe(
      'would grant it (fs:read_file) but is disabled by strict loading: "fs:gone": server "fs" has no tool "gone"',
    )
  })

  it('says when the role cannot reach the granting skill (allowedRoles or cap)', () => {
    expect(explain('fs', 'write_file', 'guest', []).steps).toContainEqual({
      rule: 'skill writer',
      verdict: 'info',
      detail: 'grants it (fs:*) but role guest does not reach this skill (allowedRoles: dev)',
    })
    expect(explain('fs', 'write_file', 'intern', []).steps).toContainEqual({
      rule: 'skill writer',
      verdict: 'info',
      detail: 'grants it (fs:*) but role intern does not reach this skill (not in its allowedSkills cap)',
    })
  })

  it('says which skill would grant it once activated, and that none is active', () => {
    const e = explain('fs', 'read_file', 'guest', [])
    expect(e.steps).toContainEqual({
      rule: 'skill reader',
      verdict: 'info',
      detail: 'grants it (fs:read_*) once activated',
    })
    expect(e.steps).toContainEqual({ rule: 'active skills', verdict: 'denies', detail: 'no skill is active' })
  })

  it('says when the tool is not in the catalogue, even if a pattern matches', () => {
    const e = explain('fs', 'read_secret', 'dev', ['writer'], false)
    expect(e.visible).toBe(false)
    expect(e.steps[0]).toEqual({
      rule: 'catalogue',
      verdict: 'denies',
      detail: 'no running server offers fs:read_secret',
    })
  })

  it('knows the built-ins without a catalogue, and the memory grant rule', () => {
    expect(explain(BUILTIN_SERVER, 'exec', 'dev', ['writer'], false).visible).toBe(true)
    expect(explain(BUILTIN_SERVER, 'nope', 'dev', ['writer'], false).steps[0]).toEqual({
      rule: 'catalogue',
      verdict: 'denies',
      detail: 'myc has no built-in tool "nope"',
    })
    const off = explain(BUILTIN_SERVER, 'save_memory', 'dev', ['writer'])
    expect(off.visible).toBe(false)
    expect(off.steps).toEqual([
      { rule: 'skill notes', verdict: 'info', detail: 'grants memory (team) once activated' },
      { rule: 'memory grant', verdict: 'denies', detail: 'no active skill grants memory (grants.memory)' },
    ])
    expect(explain(BUILTIN_SERVER, 'recall_memory', 'dev', ['notes']).steps).toEqual([
      { rule: 'skill notes', verdict: 'allows', detail: 'grants memory (team)' },
      { rule: 'memory grant', verdict: 'allows', detail: 'team: reads dev; writes dev' },
    ])
  })

  it('with `available`, agrees with visibleBuiltins: a built-in the process does not run is hidden, and says why', () => {
    const available = new Set(['exec', 'run_script'])
    const builtins = ['exec', 'run_script', 'save_memory', 'recall_memory', 'list_memories']
    for (const role of ['guest', 'dev', 'lead']) {
      for (const active of [[], ['writer'], ['notes'], ['writer', 'notes']]) {
        const shown = visibleBuiltins(policy.filter(role, new Set(active)), { available })
        for (const tool of builtins)
          expect(
            explainTool(policy, {
              server: BUILTIN_SERVER,
              tool,
              role,
              active: new Set(active),
              inCatalogue: false,
              available,
            }).visible,
            `${role} [${active}] ${tool}`,
          ).toBe(shown.includes(tool))
      }
    }
    const e = explainTool(policy, {
      server: BUILTIN_SERVER,
      tool: 'save_memory',
      role: 'dev',
      active: new Set(['notes']),
      inCatalogue: false,
      available,
    })
    expect(e.visible).toBe(false)
    expect(e.steps[0]).toEqual({
      rule: 'built-ins',
      verdict: 'denies',
      detail:
        'myc does not serve mycelium:save_memory (it serves mycelium:exec, mycelium:run_script besides the meta tools)',
    })
    expect(
      explainTool(policy, {
        server: BUILTIN_SERVER,
        tool: 'exec',
        role: 'dev',
        active: new Set(['writer']),
        inCatalogue: false,
        available,
      }).visible,
    ).toBe(true)
  })

  it('lists the known roles for an unknown role', () => {
    expect(explain('fs', 'list', 'root', []).steps).toEqual([
      { rule: 'role', verdict: 'denies', detail: 'unknown role "root" (roles: dev, guest, intern, lead)' },
    ])
  })

  describe('code mode', () => {
    const on = { on: true, by: 'the codeMode of role "dev"' }
    const off = { on: false, by: 'session.codeMode' }
    const code = (role: string, tool: string, server = BUILTIN_SERVER, sessions = on, active: string[] = []) =>
      explainTool(policy, {
        server,
        tool,
        role,
        active: new Set(active),
        inCatalogue: server !== BUILTIN_SERVER,
        codeMode: { sessions, agent: off },
      })

    it('decides run_code by code mode, not by skills, and says what the agent gets and where it runs', () => {
      expect(code('dev', 'run_code')).toEqual({
        tool: 'mycelium:run_code',
        role: 'dev',
        visible: true,
        steps: [
          {
            rule: 'code mode',
            verdict: 'allows',
            detail: `code mode for role dev's sessions is on (the codeMode of role "dev")`,
          },
          {
            rule: 'code mode (agent)',
            verdict: 'info',
            detail: 'for the agent (myc run, workflow, adhoc, chat) it is off (session.codeMode)',
          },
          {
            rule: 'sandbox',
            verdict: 'info',
            detail:
              "offered only where bubblewrap runs the code; myc doctor's code mode check says whether it does here",
          },
        ],
      })
      expect(code('dev', 'run_code', BUILTIN_SERVER, off)).toMatchObject({
        visible: false,
        steps: [{ rule: 'code mode', verdict: 'denies' }, { rule: 'code mode (agent)' }],
      })
      expect(code('nobody', 'run_code')).toMatchObject({ visible: false, steps: [{ rule: 'role', verdict: 'denies' }] })
      // Without code mode's facts, run_code is no built-in of the catalogue (as before code mode).
      expect(explain(BUILTIN_SERVER, 'run_code', 'dev', []).visible).toBe(false)
    })

    it('says how a session in code mode reaches a tool it does not list; a hidden tool stays hidden', () => {
      expect(code('dev', 'read_file', 'fs', on, ['reader']).steps.at(-1)).toEqual({
        rule: 'code mode',
        verdict: 'info',
        detail:
          "role dev's sessions are in code mode: not listed, callable by its name and from run_code as tools.fs.read_file",
      })
      expect(code('dev', 'exec', BUILTIN_SERVER, on, ['writer']).steps.at(-1)?.detail).toMatch(/tools\.mycelium\.exec$/)
      expect(code('dev', 'list_skills').steps.at(-1)).toMatchObject({
        detail: "role dev's sessions are in code mode, which lists it",
      })
      const hidden = code('guest', 'write_file', 'fs')
      expect(hidden.visible).toBe(false)
      expect(hidden.steps.some((s) => s.rule === 'code mode')).toBe(false)
      expect(code('dev', 'read_file', 'fs', off, ['reader']).steps.some((s) => s.rule === 'code mode')).toBe(false)
    })
  })
})
