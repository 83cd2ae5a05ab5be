import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, type LoadedConfig } from '../../src/config/load.js'
import { createLogger } from '../../src/logger.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { createView, loadPolicyMode, type PolicyMode } from '../../src/principal/policy-mode.js'
import { repoRoot } from '../helpers/fixtures.js'
import { RawConnection } from '../helpers/runtime.js'
import { childSessions } from '../../src/eras/child-sessions.js'

describe('hidden tools and skills do not exist', () => {
  const dir = path.join(repoRoot, 'tests/fixtures/policy/basic')
  let runtime: Runtime
  let loaded: LoadedConfig
  let mode: PolicyMode
  let raw: RawConnection
  const logger = createLogger({ quiet: true })

  beforeAll(async () => {
    loaded = await loadConfig({ cwd: dir, env: process.env })
    runtime = new Runtime({ childSessions, loaded, logger, version: 'test', host: hostForThisProcess() })
    mode = await loadPolicyMode(loaded, runtime.catalogue, logger)
    await runtime.start()
    if (mode.kind === 'policy') mode.state.invalidate()
    raw = await RawConnection.open(
      runtime,
      createView(mode, loaded, { role: 'guest', env: {}, catalogue: runtime.catalogue, logger }),
    )
  })
  afterAll(async () => {
    await runtime?.close()
  })

  const NEVER = 'zz_never_existed_zz'
  // The only place a name may appear: echoed back in the error message, exactly as sent.
  const normalize = (text: string, name: string) => {
    const escaped = JSON.stringify(name).slice(1, -1)
    return text.replace(`: ${escaped}"}`, ': <NAME>"}')
  }

  function probes(): string[] {
    const hidden = ['echo__add', 'echo__fail', 'echo__image', 'echo__log', 'grow__grow', 'grow__echo']
    const out = new Set<string>()
    for (const h of hidden) {
      const [server, tool] = h.split('__') as [string, string]
      for (const v of [
        h,
        h.toUpperCase(),
        h[0]!.toUpperCase() + h.slice(1),
        `${server}:${tool}`,
        `${server}_${tool}`,
        `${server}-${tool}`,
        `${server}.${tool}`,
        `${server}/${tool}`,
        `${server}::${tool}`,
        `${h} `,
        ` ${h}`,
        `${h}\t`,
        `${h}\n`,
        `${h}\r\n`,
        `${h}\u200b`,
        `\u200d${h}`,
        `${h}\u00a0`,
        h.replace('o', 'о'),
        h.replace('e', 'е'),
        h.replace('_', '＿'),
        h.normalize('NFD'),
        `${server}___${tool}`,
        `${server.slice(0, -1)}__${tool}`,
        `${server}s__${tool}`,
        `x${h}`,
        `${h}_`,
        `${h}*`,
        `${server}__*`,
        `${server}:*`,
        `mycelium__${h}`,
        `${h}/..`,
        `../${h}`,
        encodeURIComponent(`${server}:${tool}`),
        h.repeat(2),
        `${h}\u0000`,
      ])
        out.add(v)
    }
    for (const bogus of [
      '',
      ' ',
      '*',
      ':',
      '__',
      'grow',
      'writer',
      'mycelium__exec',
      'mycelium__run_script',
      'mycelium__save_memory',
      'mycelium__nope',
      'x'.repeat(10_000),
      '../../etc/passwd',
      '%00',
      'echo__echo\u0000',
      'ECHO__ECHO',
    ])
      out.add(bogus)
    return [...out]
  }

  it(`answers ${'hundreds of'} hidden and bogus tool names exactly like a name that never existed`, async () => {
    const names = probes()
    expect(names.length).toBeGreaterThanOrEqual(200)
    const reference = normalize(await raw.request('tools/call', { name: NEVER, arguments: {} }), NEVER)
    for (const name of names) {
      const answer = await raw.request('tools/call', { name, arguments: {} })
      expect(normalize(answer, name), JSON.stringify(name).slice(0, 80)).toBe(reference)
    }
  })

  it('search_tools never ranks a tool the role cannot reach: words only hidden tools have answer like words nothing has', async () => {
    const search = (query: string) =>
      raw.request('tools/call', { name: 'mycelium__search_tools', arguments: { query, limit: 50 } })
    const nothing = await search(NEVER)
    expect(nothing).toContain('No tool matches')
    for (const query of [
      'grow',
      'grown',
      'grow__grow',
      'writer',
      'Secret writer skill',
      'always fails',
      'fail',
      'sends log',
      'exec',
      'run_script',
      'save_memory recall_memory',
      'ghostly hosty broken',
      'no_such_tool',
      'zz__never',
    ]) {
      expect(await search(query), query).toBe(nothing)
    }
    // Every hidden name, as a query: only the guest's reachable tools (common, reader) can come back.
    for (const name of probes()) {
      const answer = JSON.parse(await search(name)) as {
        result?: { structuredContent?: { tools: Array<{ name: string; skills: string[] }> } }
      }
      for (const hit of answer.result?.structuredContent?.tools ?? []) {
        expect(['echo__echo', 'echo__add', 'echo__image'], JSON.stringify(name)).toContain(hit.name)
        for (const skill of hit.skills) expect(['common', 'reader']).toContain(skill)
      }
    }
  })

  it('answers hidden prompts and resources like nonexistent ones', async () => {
    // The guest reaches server echo only; grow is hidden.
    const ref = normalize(await raw.request('prompts/get', { name: NEVER }), NEVER)
    expect(normalize(await raw.request('prompts/get', { name: 'grow__greet' }), 'grow__greet')).toBe(ref)
    const refRes = normalize(await raw.request('resources/read', { uri: `x://${NEVER}` }), `x://${NEVER}`)
    expect(refRes).toMatch(/Resource not found/)
  })

  it('never names a hidden tool, skill, role or server in anything the guest receives', async () => {
    await raw.request('tools/list', {})
    await raw.request('prompts/list', {})
    await raw.request('resources/list', {})
    await raw.request('resources/templates/list', {})
    await raw.request('tools/call', { name: 'mycelium__list_skills', arguments: {} })
    await raw.request('tools/call', { name: 'mycelium__get_context', arguments: {} })
    await raw.request('tools/call', { name: 'mycelium__activate_skill', arguments: { name: 'reader' } })
    await raw.request('tools/call', { name: 'mycelium__deactivate_skill', arguments: { name: 'reader' } })
    for (const query of [
      'grow',
      'writer',
      'Secret writer skill',
      'write',
      'always fails',
      'sends a log message',
      'shell exec run_script',
      'save memory',
      'broken no_such_tool',
      'echo',
      'read add image',
      '*',
    ])
      await raw.request('tools/call', { name: 'mycelium__search_tools', arguments: { query, limit: 50 } })
    await raw.request('tools/call', { name: 'echo__echo', arguments: { message: 'hello' } })
    await raw.request('skills/list', {})
    await raw.request('skills/get', { uri: 'skill://mycelium/reader/SKILL.md' })
    await raw.request('resources/read', { uri: 'skill://mycelium/reader/SKILL.md' })
    await raw.request('resources/directory/read', { uri: 'skill://mycelium/reader/' })
    const forbidden = [
      'grow',
      'writer',
      'Writer',
      'Secret writer',
      'broken',
      'hosty',
      'ghostly',
      'lead',
      'no_such_tool',
      'echo__fail',
      'echo__log',
      'shell',
      'Sandboxed shell',
    ]
    for (const text of raw.all) {
      const probeAnswer = text.includes('Unknown tool:') || text.includes('Unknown prompt:')
      if (probeAnswer) continue // these echo back the name the caller sent, nothing else
      for (const word of forbidden) expect(text, `"${word}" in ${text.slice(0, 200)}`).not.toContain(word)
    }
  })
})
