import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { jsonHere as json, runHere as myc } from '../helpers/cli.js'
import { repoRoot } from '../helpers/fixtures.js'

// The inspection commands use the policy core (visibleBuiltins,
// previewActivation, Policy.denyProblems, the roles' warnings) the way
// `myc serve` does; each case fails if its command stops doing so.

const fixtures = path.join(repoRoot, 'tests', 'fixtures')

const servers = {
  echo: { command: process.execPath, args: [path.join(fixtures, 'servers', 'echo.mjs')] },
  grow: { command: process.execPath, args: [path.join(fixtures, 'servers', 'list-changing.mjs')] },
}

/**
 * A policy-mode config over the basic fixture skills and the given servers
 * (each a child every command here starts: a config names only the ones its
 * case reads), a deny that does not parse, and two caps naming no skill (one
 * in roles/ops.yaml).
 */
function config(
  names: Array<keyof typeof servers>,
  session: Record<string, unknown> = {},
): { file: string; dir: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-policy-commands-'))
  mkdirSync(path.join(dir, 'roles'))
  writeFileSync(path.join(dir, 'roles', 'ops.yaml'), 'allowedSkills: [common, missing]\n')
  const file = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    file,
    JSON.stringify({
      mcpServers: Object.fromEntries(names.map((name) => [name, servers[name]])),
      skills: { dirs: [path.join(fixtures, 'policy', 'basic', 'skills')] },
      roles: {
        default: 'guest',
        definitions: {
          lead: { inherits: 'developer', deny: ['echo:fail', 'notaserver'] },
          capped: { allowedSkills: ['writer', 'typo'] },
        },
      },
      session: { defaultSkills: ['common'], ...session },
    }),
  )
  return { file, dir }
}

const TYPO = 'roles.definitions.capped.allowedSkills: no skill is named "typo" (remove it or fix the name)'
const MISSING = 'roles.definitions.ops.allowedSkills: no skill is named "missing" (remove it or fix the name)'

describe('inspection commands on the policy core (in process)', () => {
  // Each command starts every server of its config, so each names only what its case reads: echo
  // for the tools a list or preview shows (and the common skill every session starts with), grow
  // for writer's. Roles, caps, deny patterns and built-ins are decided from the config and the
  // skills alone: the commands that check only those run on a config without servers.
  const grown = config(['echo', 'grow'])
  const echo = config(['echo'])
  const { file, dir } = config([])

  it('myc tools lists the built-ins serve would offer: exec and run_script once a skill allows them', async () => {
    const ids = async (extra: string[]) =>
      (await json(['tools', '--config', echo.file, '--role', 'developer', ...extra])).doc.tools.map(
        (t: { id: string }) => t.id,
      )
    expect(await ids([])).toEqual([
      'mycelium:list_skills',
      'mycelium:activate_skill',
      'mycelium:deactivate_skill',
      'mycelium:get_context',
      'mycelium:search_tools',
      'echo:echo',
    ])
    expect(await ids(['--skills', 'shell'])).toEqual([
      'mycelium:list_skills',
      'mycelium:activate_skill',
      'mycelium:deactivate_skill',
      'mycelium:get_context',
      'mycelium:search_tools',
      'mycelium:exec',
      'mycelium:run_script',
      'echo:echo',
    ])
    // What --all says of a built-in needs no server.
    const all = (await json(['tools', '--config', file, '--role', 'developer', '--all'])).doc.tools
    expect(all.find((t: { id: string }) => t.id === 'mycelium:exec')).toMatchObject({
      wireName: 'mycelium__exec',
      server: 'mycelium',
      visible: false,
    })
    const off = config(['echo'], { metaTools: false })
    expect(
      (await json(['tools', '--config', off.file, '--role', 'developer', '--skills', 'shell'])).doc.tools.map(
        (t: { id: string }) => t.id,
      ),
    ).toEqual(['mycelium:exec', 'mycelium:run_script', 'echo:echo'])
  })

  it('myc preview skill goes through previewActivation: built-ins count, already-active and disabled are said', async () => {
    const shell = await json(['preview', 'skill', 'shell', '--config', echo.file, '--role', 'developer'])
    expect(shell.code).toBe(0)
    expect(shell.doc).toMatchObject({
      ok: true,
      skill: 'shell',
      role: 'developer',
      active: ['common'],
      alreadyActive: false,
      added: [
        { id: 'mycelium:exec', wireName: 'mycelium__exec' },
        { id: 'mycelium:run_script', wireName: 'mycelium__run_script' },
      ],
    })
    expect(shell.doc.addedTokens).toBeGreaterThan(0)
    const writer = (await json(['preview', 'skill', 'writer', '--config', grown.file, '--role', 'developer'])).doc
    expect(writer.added.map((t: { id: string }) => t.id)).toEqual(
      expect.arrayContaining(['echo:add', 'echo:fail', 'grow:grow']),
    )
    expect(writer.added.map((t: { id: string }) => t.id)).not.toContain('echo:echo')
    expect(
      (await json(['preview', 'skill', 'common', '--config', echo.file, '--role', 'developer'])).doc,
    ).toMatchObject({
      ok: true,
      alreadyActive: true,
      added: [],
      addedTokens: 0,
    })
    expect((await myc(['preview', 'skill', 'common', '--config', echo.file, '--role', 'developer'])).stdout).toMatch(
      /common is already active for role developer/,
    )
    const broken = await json(['preview', 'skill', 'broken', '--config', echo.file, '--role', 'developer'])
    expect(broken.code).toBe(2)
    expect(broken.doc.error.message).toMatch(/^skill "broken" is disabled: /)
  })

  it('myc preview skill answers a person, not the agent: the skill exists, the role cannot reach it, and which roles can', async () => {
    // shell names only built-ins, so it is enabled with no server configured.
    const out = await myc(['preview', 'skill', 'shell', '--config', file, '--role', 'guest'])
    expect(out.code).toBe(2)
    expect(out.stderr).toMatch(/skill "shell" exists, but role "guest" cannot reach it; roles that can: developer/)
    expect(out.stderr).not.toMatch(/list_skills/)
    expect((await json(['preview', 'skill', 'nope', '--config', file, '--role', 'guest'])).doc.error.message).toBe(
      'no skill is named "nope" (`myc skills` lists them)',
    )
  })

  it('myc policy check reports a deny that does not parse as a violation (exit 3), and the role’s warnings', async () => {
    const lead = await json(['policy', 'check', '--role', 'lead', '--config', file])
    expect(lead.code).toBe(3)
    expect(lead.doc.violations).toContain(
      'role lead: deny pattern "notaserver" names no configured server: write it as server:tool (it is ignored, so it denies nothing)',
    )
    expect(lead.doc.warnings).toEqual([])
    // A warning alone does not fail the check.
    const capped = await json(['policy', 'check', '--role', 'capped', '--config', file])
    expect(capped.code).toBe(0)
    expect(capped.doc).toMatchObject({ ok: true, violations: [], warnings: [TYPO] })
    expect((await myc(['policy', 'check', '--role', 'capped', '--config', file])).stdout).toContain(`warning: ${TYPO}`)
    expect((await myc(['policy', 'check', '--role', 'lead', '--config', file])).stdout).toMatch(
      /^violation: role lead: deny pattern "notaserver"/m,
    )
  })

  it('myc roles shows the role warnings, as text and as a warnings array', async () => {
    const { code, doc } = await json(['roles', '--config', file])
    expect(code).toBe(0)
    expect(doc.warnings).toEqual([TYPO, MISSING])
    const text = (await myc(['roles', '--config', file])).stdout
    expect(text).toContain(`warning: ${TYPO}`)
    expect(text).toContain(`warning: ${MISSING}`)
  })

  it('myc skills lint includes the role warnings, severity warning, in the file of each definition', async () => {
    const { code, doc } = await json(['skills', 'lint', '--config', file])
    expect(code).toBe(3)
    const roleProblems = doc.problems.filter((p: { message: string }) => p.message.startsWith('roles.definitions.'))
    expect(roleProblems).toEqual([
      { file, severity: 'warning', message: TYPO },
      { file: path.join(dir, 'roles', 'ops.yaml'), severity: 'warning', message: MISSING },
    ])
    expect((await myc(['skills', 'lint', '--config', file])).stdout).toContain(
      `warning: ${path.join(dir, 'roles', 'ops.yaml')}: ${MISSING}`,
    )
  })

  it('myc explain decides built-ins as serve does: wire names, session.metaTools, the memory grant', async () => {
    const memory = (await json(['explain', 'mycelium__save_memory', '--config', file, '--role', 'developer'])).doc
    expect(memory).toMatchObject({ ok: true, tool: 'mycelium:save_memory', visible: false })
    expect(memory.steps.at(-1)).toMatchObject({ rule: 'memory grant', verdict: 'denies' })
    expect(
      (await json(['explain', 'mycelium__exec', '--config', file, '--role', 'developer', '--skills', 'shell'])).doc,
    ).toMatchObject({ tool: 'mycelium:exec', visible: true })
    const off = config([], { metaTools: false })
    expect(
      (await json(['explain', 'mycelium:list_skills', '--config', off.file, '--role', 'developer'])).doc,
    ).toMatchObject({
      visible: false,
      steps: [{ rule: 'meta tools', verdict: 'denies' }],
    })
    expect((await json(['explain', 'mycelium:list_skills', '--config', file, '--role', 'developer'])).doc.visible).toBe(
      true,
    )
  })

  it('myc explain says whether a role is in code mode, and how a session in it reaches a tool it does not list', async () => {
    const code = config([], { codeMode: true })
    // echo:echo's own line needs the tool in the catalogue.
    const echoCode = config(['echo'], { codeMode: true })
    const runCode = (await json(['explain', 'mycelium__run_code', '--config', code.file, '--role', 'developer'])).doc
    expect(runCode).toMatchObject({ ok: true, tool: 'mycelium:run_code', visible: true })
    expect(runCode.steps.slice(0, 2)).toEqual([
      {
        rule: 'code mode',
        verdict: 'allows',
        detail: "code mode for role developer's sessions is on (session.codeMode)",
      },
      {
        rule: 'code mode (agent)',
        verdict: 'info',
        detail: 'for the agent (myc run, workflow, adhoc, chat) it is off (agent.codeMode)',
      },
    ])
    expect(
      (await json(['explain', 'echo:echo', '--config', echoCode.file, '--role', 'developer'])).doc.steps.at(-1),
    ).toEqual({
      rule: 'code mode',
      verdict: 'info',
      detail:
        "role developer's sessions are in code mode: not listed, callable by its name and from run_code as tools.echo.echo",
    })
    const off = (await json(['explain', 'mycelium:run_code', '--config', file, '--role', 'developer'])).doc
    expect(off.visible).toBe(false)
    expect(off.steps).toEqual([
      {
        rule: 'code mode',
        verdict: 'denies',
        detail: "code mode for role developer's sessions is off (session.codeMode)",
      },
      {
        rule: 'code mode (agent)',
        verdict: 'info',
        detail: 'for the agent (myc run, workflow, adhoc, chat) it is off (agent.codeMode)',
      },
    ])
  })
})
