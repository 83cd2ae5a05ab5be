import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { createLogger } from '../../src/logger.js'
import { createView, isPolicyMode, loadPolicyMode } from '../../src/principal/policy-mode.js'

const logger = createLogger({ quiet: true })
const noTools = { toolNamesOf: () => undefined }

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-mode-'))
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true })
    writeFileSync(path.join(dir, rel), text)
  }
  return dir
}
const skill = (name: string, roles: string) =>
  `---\nname: ${name}\ndescription: d\nallowedRoles: [${roles}]\nallowedTools: []\n---\n`

describe('policy mode', () => {
  it('is open mode without a skills key or folder, policy mode with either', async () => {
    expect(isPolicyMode(await loadConfig({ cwd: project({ 'mycelium.config.json': '{}' }), env: {} }))).toBe(false)
    expect(
      isPolicyMode(
        await loadConfig({ cwd: project({ 'mycelium.config.json': '{"skills":{"dirs":["elsewhere"]}}' }), env: {} }),
      ),
    ).toBe(true)
    expect(
      isPolicyMode(
        await loadConfig({
          cwd: project({ 'mycelium.config.json': '{}', 'skills/a/SKILL.md': skill('a', 'dev') }),
          env: {},
        }),
      ),
    ).toBe(true)
  })

  it('refuses a role or skills asked for in open mode, naming open mode and how to add skills; a role from the config is no request', async () => {
    const loaded = await loadConfig({ cwd: project({ 'mycelium.config.json': '{}' }), env: {} })
    const mode = await loadPolicyMode(loaded, noTools, logger)
    const request = { env: {}, catalogue: {} as never, logger }
    expect(() => createView(mode, loaded, { ...request, role: 'reviewer' })).toThrow(
      /--role reviewer: .* has no skills, so myc runs in open mode: every tool of every server.*myc init/,
    )
    expect(() => createView(mode, loaded, { ...request, skills: ['x'] })).toThrow(/--skills x: .*open mode/)
    expect(
      createView(mode, loaded, { ...request, role: 'adhoc', roleFrom: 'agent.adhocRole' }).describe?.(),
    ).toBeUndefined()
    expect(createView(mode, loaded, request).toolVisible({ server: 'a', name: 'b' } as never)).toBe(true)
  })

  it('names where a role came from when it does not exist', async () => {
    const loaded = await loadConfig({
      cwd: project({ 'mycelium.config.json': '{}', 'skills/a/SKILL.md': skill('a', 'dev') }),
      env: {},
    })
    const mode = await loadPolicyMode(loaded, noTools, logger)
    const request = { env: {}, catalogue: {} as never, logger }
    expect(() => createView(mode, loaded, { ...request, role: 'adhoc', roleFrom: 'agent.adhocRole' })).toThrow(
      /unknown role "adhoc" \(from agent\.adhocRole\)/,
    )
    expect(() => createView(mode, loaded, { ...request, role: 'x' })).toThrow(/unknown role "x" \(from --role\)/)
    expect(() => createView(mode, loaded, { ...request, env: { MYCELIUM_ROLE: 'y' } })).toThrow(
      /unknown role "y" \(from MYCELIUM_ROLE\)/,
    )
  })

  it('reads role definitions from roles/<id>.yaml', async () => {
    const dir = project({
      'mycelium.config.json': '{}',
      'skills/a/SKILL.md': skill('a', 'dev'),
      'skills/b/SKILL.md': skill('b', 'dev'),
      'roles/junior.yaml': 'inherits: dev\nallowedSkills: [a]\ndeny: ["x:*"]\n',
    })
    const mode = await loadPolicyMode(await loadConfig({ cwd: dir, env: {} }), noTools, logger)
    expect(mode.kind === 'policy' && mode.state.roles.get('junior')).toMatchObject({
      chain: ['junior', 'dev'],
      deny: ['x:*'],
    })
    expect(mode.kind === 'policy' && [...mode.state.roles.get('junior')!.skills]).toEqual(['a'])
  })

  it('rejects a bad roles/<id>.yaml and a role defined twice, naming the file', async () => {
    const bad = project({
      'mycelium.config.json': '{}',
      'skills/a/SKILL.md': skill('a', 'dev'),
      'roles/x.yaml': 'inherit: dev\n',
    })
    await expect(loadPolicyMode(await loadConfig({ cwd: bad, env: {} }), noTools, logger)).rejects.toThrow(
      /roles\/x\.yaml: inherit/,
    )
    const twice = project({
      'mycelium.config.json': '{"roles":{"definitions":{"x":{}}}}',
      'skills/a/SKILL.md': skill('a', 'dev'),
      'roles/x.yaml': 'deny: []\n',
    })
    await expect(loadPolicyMode(await loadConfig({ cwd: twice, env: {} }), noTools, logger)).rejects.toThrow(
      /role "x" is defined both/,
    )
  })

  it('turns an inheritance cycle into a config error', async () => {
    const dir = project({
      'mycelium.config.json': '{"roles":{"definitions":{"a":{"inherits":"b"},"b":{"inherits":"a"}}}}',
      'skills/s/SKILL.md': skill('s', 'a'),
    })
    await expect(loadPolicyMode(await loadConfig({ cwd: dir, env: {} }), noTools, logger)).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(/cycle a → b → a/),
    })
  })
})
