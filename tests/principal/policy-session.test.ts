import { readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig, type LoadedConfig } from '../../src/config/load.js'
import { createLogger } from '../../src/logger.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { createView, loadPolicyMode } from '../../src/principal/policy-mode.js'
import { repoRoot } from '../helpers/fixtures.js'
import { connectClient, PolicyHarness, waitFor } from '../helpers/runtime.js'
import { childSessions } from '../../src/eras/child-sessions.js'

const dir = path.join(repoRoot, 'tests/fixtures/policy/basic')

describe('policy mode sessions', () => {
  const h = new PolicyHarness(() => loadConfig({ cwd: dir, env: process.env }))
  beforeAll(() => h.start())
  afterAll(() => h.close())
  const logger = h.logger

  async function session(
    role?: string,
    skills?: string[],
    capabilities?: Record<string, unknown>,
    setup?: (c: Client) => void,
  ) {
    return connectClient(h.runtime, { view: await h.view(role, skills ? { skills } : {}), capabilities, setup })
  }
  const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name)
  const text = (r: { content: unknown }) => (r.content as Array<{ text: string }>)[0]!.text

  it('is in policy mode because the config has a skills folder', () => {
    expect(h.mode.kind).toBe('policy')
  })

  it('a guest sees only its active skills’ tools plus the meta tools', async () => {
    const { client } = await session()
    expect(await names(client)).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__deactivate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
      'echo__echo',
    ])
    expect(text(await client.callTool({ name: 'echo__echo', arguments: { message: 'hi' } }))).toBe('hi')
    await client.close()
  })

  it('lists only reachable, enabled skills', async () => {
    const { client } = await session('developer')
    const listed = (await client.callTool({ name: 'mycelium__list_skills', arguments: {} })).structuredContent as {
      skills: Array<{ name: string; active: boolean }>
    }
    // broken (no such tool), ghostly (bad name) and hosty (host tools) are not there.
    expect(listed.skills.map((s) => `${s.name}:${s.active}`)).toEqual([
      'common:true',
      'reader:false',
      'shell:false',
      'writer:false',
    ])
    await client.close()
  })

  it('activating a skill adds its tools, sends list_changed, and deactivating removes them', async () => {
    let changed = 0
    const { client } = await session('developer', undefined, undefined, (c) =>
      c.setNotificationHandler('notifications/tools/list_changed', () => {
        changed++
      }),
    )
    expect(await names(client)).not.toContain('grow__grow')
    const result = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    expect(text(result)).toContain('Writer instructions: be careful.')
    expect((result.structuredContent as { addedTools: string[] }).addedTools).toEqual(
      expect.arrayContaining(['echo__add', 'echo__fail', 'grow__grow']),
    )
    await waitFor(() => changed > 0, 2_000, 'list_changed')
    expect(await names(client)).toEqual(expect.arrayContaining(['grow__grow', 'echo__fail']))
    expect(text(await client.callTool({ name: 'echo__add', arguments: { a: 1, b: 2 } }))).toBe('3')
    const off = await client.callTool({ name: 'mycelium__deactivate_skill', arguments: { name: 'writer' } })
    expect((off.structuredContent as { removedTools: string[] }).removedTools).toContain('grow__grow')
    expect(await names(client)).not.toContain('grow__grow')
    await expect(client.callTool({ name: 'grow__grow', arguments: { name: 'x' } })).rejects.toThrow(
      /Unknown tool: grow__grow/,
    )
    await client.close()
  })

  it('activate_skill names every tool it added, the built-ins (mycelium__exec) included', async () => {
    const { BuiltinRunner } = await import('../../src/principal/builtin-exec.js')
    const runner = new BuiltinRunner({ run: () => Promise.reject(new Error('not run')) }, h.loaded.config, tmpdir(), [])
    const { client } = await connectClient(h.runtime, { view: await h.view('developer', { runner }) })
    const result = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'shell' } })
    expect(text(result)).toMatch(/^Skill shell is active\. Tools added: mycelium__exec, mycelium__run_script\./)
    expect((result.structuredContent as { addedTools: string[] }).addedTools).toEqual([
      'mycelium__exec',
      'mycelium__run_script',
    ])
    const off = await client.callTool({ name: 'mycelium__deactivate_skill', arguments: { name: 'shell' } })
    expect((off.structuredContent as { removedTools: string[] }).removedTools).toEqual([
      'mycelium__exec',
      'mycelium__run_script',
    ])
    await client.close()
  })

  it('refuses to deactivate a protected skill', async () => {
    const { client } = await session('developer')
    const r = await client.callTool({ name: 'mycelium__deactivate_skill', arguments: { name: 'common' } })
    expect(r.isError).toBe(true)
    expect(text(r)).toMatch(/protected/)
    await client.close()
  })

  it('answers an unreachable skill exactly like one that does not exist', async () => {
    const { client } = await session('guest')
    const hidden = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    const never = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'zzzzzz' } })
    expect(JSON.stringify(hidden).replace('writer', 'NAME')).toBe(JSON.stringify(never).replace('zzzzzz', 'NAME'))
    const disabled = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'broken' } })
    expect(JSON.stringify(disabled).replace('broken', 'NAME')).toBe(JSON.stringify(never).replace('zzzzzz', 'NAME'))
    await client.close()
  })

  it('applies inherited skills and deny patterns (deny wins)', async () => {
    const { client } = await session('lead', ['writer'])
    const tools = await names(client)
    expect(tools).toContain('echo__add')
    expect(tools).not.toContain('echo__fail')
    await expect(client.callTool({ name: 'echo__fail', arguments: {} })).rejects.toThrow(/Unknown tool: echo__fail/)
    await client.close()
  })

  it('rejects an unknown role with the known ones, and a skill the role cannot use', () => {
    expect(() =>
      createView(h.mode, h.loaded, { role: 'nobody', env: {}, catalogue: h.runtime.catalogue, logger }),
    ).toThrow(/unknown role "nobody" \(from --role\); roles: developer, guest, lead/)
    expect(() =>
      createView(h.mode, h.loaded, {
        role: 'guest',
        skills: ['writer'],
        env: {},
        catalogue: h.runtime.catalogue,
        logger,
      }),
    ).toThrow(/--skills: role "guest" cannot use skill "writer"/)
  })

  it('takes the role from MYCELIUM_ROLE when there is no --role', async () => {
    const view = createView(h.mode, h.loaded, {
      env: { MYCELIUM_ROLE: 'developer' },
      catalogue: h.runtime.catalogue,
      logger,
    }) as unknown as { role: string }
    expect(view.role).toBe('developer')
  })

  it('hides prompts and resources of servers no active skill touches', async () => {
    const { client } = await session('guest')
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['echo__greet'])
    const dev = await session('developer')
    expect((await dev.client.listResources()).resources.map((r) => r.uri)).toEqual(['echo://static'])
    await client.close()
    await dev.client.close()
  })

  it('get_context reports role, active skills, visible tools and escalation mode', async () => {
    const { client } = await session('developer', ['reader'])
    const ctx = (await client.callTool({ name: 'mycelium__get_context', arguments: {} })).structuredContent
    expect(ctx).toEqual({ role: 'developer', activeSkills: ['common', 'reader'], visibleTools: 8, escalation: 'auto' })
    await client.close()
  })
})

describe('escalation modes and the audit log', () => {
  let runtime: Runtime
  let loaded: LoadedConfig
  const logger = createLogger({ quiet: true })
  const auditFile = path.join(tmpdir(), `myc-audit-${process.pid}-${Date.now()}.jsonl`)

  beforeAll(async () => {
    const base = await loadConfig({ cwd: dir, env: process.env })
    loaded = { ...base, config: { ...base.config, audit: { file: auditFile } } }
    runtime = new Runtime({ childSessions, loaded, logger, version: 'test', host: hostForThisProcess() })
    await runtime.start()
  })
  afterAll(async () => {
    await runtime?.close()
  })

  async function sessionIn(
    escalation: 'ask' | 'manual',
    answer?: { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string | number | boolean> },
  ) {
    const cfg = { ...loaded, config: { ...loaded.config, session: { ...loaded.config.session, escalation } } }
    const mode = await loadPolicyMode(cfg, runtime.catalogue, logger)
    const view = createView(mode, cfg, { role: 'developer', env: {}, catalogue: runtime.catalogue, logger })
    const asked: string[] = []
    const { client } = await connectClient(runtime, {
      view,
      capabilities: answer ? { elicitation: { form: {} } } : {},
      setup: (c) => {
        if (answer)
          c.setRequestHandler('elicitation/create', (req) => {
            asked.push((req.params as { message: string }).message)
            return answer
          })
      },
    })
    return { client, asked, mode }
  }
  const textOf = (r: { content: unknown }) => (r.content as Array<{ text: string }>)[0]!.text

  it('ask mode: activates after the user approves through elicitation', async () => {
    const { client, asked } = await sessionIn('ask', { action: 'accept', content: { approve: true } })
    const r = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    expect(r.isError).toBeUndefined()
    expect(asked[0]).toMatch(/activate the skill "writer"/)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('grow__grow')
    await client.close()
  })

  it('ask mode: refuses when the user declines', async () => {
    const { client } = await sessionIn('ask', { action: 'decline' })
    const r = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    expect(r.isError).toBe(true)
    expect(textOf(r)).toMatch(/did not approve/)
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('grow__grow')
    await client.close()
  })

  it('ask mode: refuses clearly when the client cannot ask', async () => {
    const { client } = await sessionIn('ask')
    const r = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    expect(textOf(r)).toMatch(/needs the user's approval, and this client cannot ask for it/)
    await client.close()
  })

  it('manual mode: the agent cannot activate', async () => {
    const { client } = await sessionIn('manual', { action: 'accept', content: { approve: true } })
    const r = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'writer' } })
    expect(textOf(r)).toMatch(/only be activated by a person/)
    await client.close()
  })

  it('writes session starts, skill changes, refusals and tool calls to the audit log, without argument values', async () => {
    const { client, mode } = await sessionIn('ask', { action: 'accept', content: { approve: true } })
    await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'reader' } })
    await client.callTool({ name: 'echo__echo', arguments: { message: 'top-secret-value' } })
    await client.callTool({ name: 'grow__grow', arguments: { name: 'x' } }).catch(() => {})
    if (mode.kind === 'policy') await mode.audit.flush()
    const lines = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((l: string) => JSON.parse(l))
    const events = lines.map((l: { event: string }) => l.event)
    expect(events).toEqual(expect.arrayContaining(['session_start', 'skill_activated', 'skill_refused', 'tool_call']))
    expect(lines.find((l: { tool?: string }) => l.tool === 'echo__echo')).toMatchObject({
      event: 'tool_call',
      role: 'developer',
      outcome: 'ok',
      argumentKeys: ['message'],
    })
    expect(lines.find((l: { tool?: string }) => l.tool === 'grow__grow')).toMatchObject({ outcome: 'denied' })
    expect(readFileSync(auditFile, 'utf8')).not.toContain('top-secret-value')
    await client.close()
  })
})
