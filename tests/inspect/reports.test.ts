import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/parse.js'
import {
  builtinByWireName,
  builtinTools,
  lintSkills,
  policyCheck,
  previewSkill,
  roleDefinitionFile,
  roleWarningProblems,
  roleWarnings,
  SERVED_BUILTINS,
  toolsReport,
} from '../../src/inspect/reports.js'
import { previewActivation, unknownSkill } from '../../src/policy/escalation.js'
import { Policy, visibleBuiltins } from '../../src/policy/policy.js'
import { resolveRoles, type RoleDefinitionInput } from '../../src/policy/roles.js'
import type { Skill } from '../../src/policy/skill-definition.js'
import { Catalogue } from '../../src/registry/catalogue.js'
import { facts, skill } from '../policy/helpers.js'

const naming = { separator: '__', maxLength: 64 }
const tool = (name: string) => ({ name, description: `${name} tool`, inputSchema: { type: 'object' as const } })
const servers = { fs: ['read_file', 'write_file'], git: ['log', 'push'] }

function catalogue(): Catalogue {
  const c = new Catalogue(Object.keys(servers), naming)
  for (const [server, tools] of Object.entries(servers)) c.setServer(server, { tools: tools.map(tool) }, ['tools'])
  return c
}

const skills: Skill[] = [
  skill('common', { allowedRoles: ['guest', '*'], allowedTools: ['fs:read_file'] }),
  skill('writer', { allowedRoles: ['dev'], allowedTools: ['fs:*', 'git:push'] }),
  skill('shell', { allowedRoles: ['dev'], allowedTools: ['mycelium:exec', 'mycelium:run_script'] }),
  skill('notes', { allowedRoles: ['dev'], grants: { memory: 'team', memoryTeamRoles: ['dev'] } }),
  skill('broken', { allowedRoles: ['dev'], allowedTools: ['fs:gone'] }),
]
const definitions = new Map<string, RoleDefinitionInput>([
  ['lead', { inherits: 'dev', deny: ['git:push', 'notaserver', 'git:nothing_matches'] }],
  ['dev', { allowedSkills: ['common', 'writer', 'shell', 'notes', 'broken', 'typo'] }],
  ['ops', { allowedSkills: ['common', 'missing'] }],
])

function policy(): Policy {
  const roles = resolveRoles(skills, definitions)
  if (!roles.ok) throw new Error(roles.error)
  return new Policy({
    skills,
    roles: roles.roles,
    servers: new Set(Object.keys(servers)),
    separator: '__',
    catalogue: facts(servers),
  })
}

describe('myc tools: built-ins through visibleBuiltins', () => {
  const p = policy()

  it('lists exactly what visibleBuiltins says, narrowed to the built-ins serve runs', () => {
    for (const role of ['guest', 'dev', 'lead', 'ops']) {
      for (const active of [[], ['shell'], ['notes'], ['shell', 'notes', 'writer']]) {
        for (const metaTools of [true, false]) {
          const filter = p.filter(role, new Set(active))
          const shown = builtinTools(filter, { metaTools, naming })
            .filter((b) => b.visible)
            .map((b) => b.name)
          expect(shown, `${role} [${active}] metaTools=${metaTools}`).toEqual(
            visibleBuiltins(filter, { metaTools, available: SERVED_BUILTINS }),
          )
        }
      }
    }
  })

  it('an active skill allowing mycelium:exec adds exec and run_script; a memory grant adds the memory tools', () => {
    const ids = (active: string[], all = false) =>
      toolsReport(
        catalogue(),
        () => false,
        builtinTools(p.filter('dev', new Set(active)), { metaTools: true, naming }),
        all,
      ).map((r) => `${r.visible ? '+' : '-'}${r.id}`)
    expect(ids([])).toEqual([
      '+mycelium:list_skills',
      '+mycelium:activate_skill',
      '+mycelium:deactivate_skill',
      '+mycelium:get_context',
      '+mycelium:search_tools',
    ])
    expect(ids(['shell'])).toEqual([
      '+mycelium:list_skills',
      '+mycelium:activate_skill',
      '+mycelium:deactivate_skill',
      '+mycelium:get_context',
      '+mycelium:search_tools',
      '+mycelium:exec',
      '+mycelium:run_script',
    ])
    expect(ids(['notes'])).toEqual(
      expect.arrayContaining(['+mycelium:save_memory', '+mycelium:recall_memory', '+mycelium:list_memories']),
    )
    expect(ids(['shell'])).not.toContain('+mycelium:save_memory')
    expect(ids([], true)).toEqual(expect.arrayContaining(['-mycelium:exec', '-mycelium:run_script', '-fs:read_file']))
  })

  it('rows carry wire names, descriptions and the server', () => {
    const rows = toolsReport(
      catalogue(),
      (e) => e.server === 'fs',
      builtinTools(p.filter('dev', new Set(['shell'])), {
        metaTools: false,
        naming: { separator: '.', maxLength: 64 },
      }),
      false,
    )
    expect(rows.map((r) => r.wireName)).toEqual([
      'mycelium.exec',
      'mycelium.run_script',
      'fs__read_file',
      'fs__write_file',
    ])
    expect(rows[0]).toMatchObject({ id: 'mycelium:exec', server: 'mycelium', name: 'exec', visible: true })
    expect(rows[0]!.description).toMatch(/shell command/)
  })

  it('finds a built-in by its wire name', () => {
    expect(builtinByWireName('mycelium__exec', naming)).toBe('exec')
    expect(builtinByWireName('mycelium.list_skills', { separator: '.', maxLength: 64 })).toBe('list_skills')
    expect(builtinByWireName('fs__read_file', naming)).toBeUndefined()
  })
})

describe('myc preview skill: previewActivation', () => {
  const p = policy()

  it('adds what previewActivation adds, with wire names and its token estimate', () => {
    const c = catalogue()
    const r = previewSkill(p, c, 'dev', new Set(['common']), 'writer', naming)
    const core = previewActivation(
      p,
      'dev',
      new Set(['common']),
      'writer',
      c.tools().map((e) => ({ server: e.server, name: e.name, def: e.wire })),
    )
    if (!r.ok || !core.ok) throw new Error('expected a preview')
    expect(r).toEqual({
      ok: true,
      skill: 'writer',
      role: 'dev',
      active: ['common'],
      alreadyActive: false,
      added: [
        { id: 'fs:write_file', wireName: 'fs__write_file' },
        { id: 'git:push', wireName: 'git__push' },
      ],
      addedTokens: core.addedTokens,
    })
    expect(r.added.map((a) => a.id)).toEqual(core.added)
  })

  it('counts the built-ins a skill brings (shell adds exec and run_script)', () => {
    const r = previewSkill(p, catalogue(), 'dev', new Set(), 'shell', naming)
    expect(r.ok && r.added).toEqual([
      { id: 'mycelium:exec', wireName: 'mycelium__exec' },
      { id: 'mycelium:run_script', wireName: 'mycelium__run_script' },
    ])
    expect(r.ok && r.addedTokens).toBeGreaterThan(50)
  })

  it('says when the skill is already active', () => {
    expect(previewSkill(p, catalogue(), 'dev', new Set(['writer']), 'writer', naming)).toMatchObject({
      ok: true,
      alreadyActive: true,
      added: [],
      addedTokens: 0,
    })
  })

  it('tells a person (not the agent) whether a skill is out of reach, disabled or unknown, and which roles reach it', () => {
    const error = (role: string, name: string) => {
      const r = previewSkill(p, catalogue(), role, new Set(), name, naming)
      if (r.ok) throw new Error('expected an error')
      return r.error
    }
    expect(error('ops', 'writer')).toBe(
      'skill "writer" exists, but role "ops" cannot reach it; roles that can: dev, lead',
    )
    expect(error('dev', 'broken')).toMatch(/^skill "broken" is disabled: .*fs:gone/)
    expect(error('dev', 'nope')).toBe('no skill is named "nope" (`myc skills` lists them)')
    for (const [role, name] of [
      ['ops', 'writer'],
      ['dev', 'broken'],
      ['dev', 'nope'],
    ] as const)
      expect(error(role, name)).not.toContain('list_skills')
    // The agent's answer stays one text for all three (non-existence).
    expect(previewActivation(p, 'ops', new Set(), 'writer', [])).toEqual({
      ok: false,
      error: unknownSkill('writer').error.message,
    })
  })
})

describe('myc policy check: denyProblems and role warnings', () => {
  const p = policy()
  const warnings = roleWarnings({ skills, definitions })

  it('reports a deny that does not parse as a violation, besides one that matches nothing', () => {
    const r = policyCheck(p, catalogue(), 'lead', warnings)
    expect(p.denyProblems('lead')).toHaveLength(1)
    expect(r.violations).toContain(`role lead: deny ${p.denyProblems('lead')[0]} (it is ignored, so it denies nothing)`)
    expect(r.violations).toContain(
      'role lead: deny "git:nothing_matches" matches no tool (a typo leaves the tool visible)',
    )
  })

  it('carries the warnings of the role and the roles it inherits, and no others', () => {
    expect(policyCheck(p, catalogue(), 'lead', warnings).warnings).toEqual([
      'roles.definitions.dev.allowedSkills: no skill is named "typo" (remove it or fix the name)',
    ])
    expect(policyCheck(p, catalogue(), 'ops', warnings).warnings).toEqual([
      'roles.definitions.ops.allowedSkills: no skill is named "missing" (remove it or fix the name)',
    ])
    expect(policyCheck(p, catalogue(), 'guest', warnings)).toMatchObject({ violations: [], warnings: [] })
  })
})

describe('role warnings for myc roles and myc skills lint', () => {
  it('roleWarnings gives resolveRoles’ warnings, all and by role', () => {
    const w = roleWarnings({ skills, definitions })
    const r = resolveRoles(skills, definitions)
    expect(r.ok && w.warnings).toEqual(r.ok && r.warnings)
    expect([...w.byRole.keys()]).toEqual(['dev', 'ops'])
  })

  it('become lint problems of severity warning, in the file of their role definition', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-roles-'))
    mkdirSync(path.join(dir, 'roles'))
    writeFileSync(path.join(dir, 'roles', 'ops.yaml'), 'allowedSkills: [missing]\n')
    writeFileSync(path.join(dir, 'roles', 'qa.yml'), 'allowedSkills: []\n')
    const file = path.join(dir, 'mycelium.config.json')
    const { config } = parseConfig({ roles: { definitions: { dev: {}, lead: {} } } }, { file, env: {} })
    const loaded = { file, dir, config }
    expect(roleDefinitionFile(loaded, 'dev')).toBe(path.join(dir, 'mycelium.config.json'))
    expect(roleDefinitionFile(loaded, 'ops')).toBe(path.join(dir, 'roles', 'ops.yaml'))
    expect(roleDefinitionFile(loaded, 'qa')).toBe(path.join(dir, 'roles', 'qa.yml'))
    const problems = roleWarningProblems(roleWarnings({ skills, definitions }), (role) =>
      roleDefinitionFile(loaded, role),
    )
    expect(problems).toEqual([
      {
        file: path.join(dir, 'mycelium.config.json'),
        severity: 'warning',
        message: 'roles.definitions.dev.allowedSkills: no skill is named "typo" (remove it or fix the name)',
      },
      {
        file: path.join(dir, 'roles', 'ops.yaml'),
        severity: 'warning',
        message: 'roles.definitions.ops.allowedSkills: no skill is named "missing" (remove it or fix the name)',
      },
    ])
    const lint = lintSkills(policy(), [], [], problems)
    expect(lint.filter((l) => l.message.startsWith('roles.definitions.'))).toEqual(problems)
    expect(lint.filter((l) => l.severity === 'error').map((l) => l.skill)).toEqual(['broken'])
  })
})
