import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config/load.js'
import { credentialView, skillScope } from '../../../src/eras/modern/credential-view.js'
import { openView } from '../../../src/principal/view.js'
import { repoRoot } from '../../helpers/fixtures.js'
import { PolicyHarness } from '../../helpers/runtime.js'

const dir = path.join(repoRoot, 'tests/fixtures/policy/basic')
const naming = { separator: '__', maxLength: 64 }
const text = (r: { content: unknown }) => (r.content as Array<{ text: string }>)[0]!.text
const noCtx = () => ({ signal: new AbortController().signal })

describe('credentialView: a 2026-era principal is its credential, escalation taken out', () => {
  const h = new PolicyHarness(() => loadConfig({ cwd: dir, env: process.env }))
  beforeAll(() => h.start())
  afterAll(() => h.close())

  it('lists activate_skill as the step-up and no deactivate_skill', async () => {
    const view = credentialView(await h.view('guest'), naming)
    const names = view.builtinTools().map((t) => t.name)
    expect(names).toEqual([
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__get_context',
      'mycelium__search_tools',
    ])
    expect(view.activateTool()?.description).toMatch(/403 insufficient_scope/)
    expect(view.callBuiltin('mycelium__deactivate_skill', { name: 'common' }, noCtx)).toBeUndefined()
  })

  it('names the skill a call would need granted: only activate_skill of a reachable skill the credential lacks', async () => {
    const view = credentialView(await h.view('guest'), naming)
    expect(view.skillToStepUp('mycelium__activate_skill', { name: 'reader' })).toBe('reader')
    expect(skillScope('reader')).toBe('skill:reader')
    // Granted already, unreachable for the role, unknown, not a string, another tool: nothing to step up to.
    for (const args of [{ name: 'common' }, { name: 'writer' }, { name: 'nope' }, { name: 7 }, {}])
      expect(view.skillToStepUp('mycelium__activate_skill', args)).toBeUndefined()
    expect(view.skillToStepUp('mycelium__list_skills', { name: 'reader' })).toBeUndefined()
    expect(
      credentialView(await h.view('guest', { skills: ['reader'] }), naming).skillToStepUp('mycelium__activate_skill', {
        name: 'reader',
      }),
    ).toBeUndefined()
  })

  it('never changes what the principal sees, whatever is called', async () => {
    const inner = await h.view('guest')
    const view = credentialView(inner, naming)
    const revision = view.revision?.()
    const visible = () =>
      h.runtime.catalogue
        .tools()
        .filter((e) => view.toolVisible(e))
        .map((e) => e.wireName)
    const before = visible()
    const notGranted = await view.callBuiltin('mycelium__activate_skill', { name: 'reader' }, noCtx)!
    expect(notGranted.isError).toBe(true)
    expect(text(notGranted)).toMatch(/^Skill reader is not granted to this client\./)
    expect(text((await view.callBuiltin('mycelium__activate_skill', { name: 'common' }, noCtx))!)).toBe(
      'Skill common is already active.\n\nEcho things.',
    )
    expect(text((await view.callBuiltin('mycelium__activate_skill', { name: 'writer' }, noCtx))!)).toMatch(
      /^Unknown skill: writer\./,
    )
    expect(view.revision?.()).toBe(revision)
    expect(inner.describe!().activeSkills.map((s) => s.name)).toEqual(['common'])
    expect(visible()).toEqual(before)
    expect(before).not.toContain('echo__add')
  })

  it('over stdio (the launch is the credential): activate_skill of a skill not given returns its instructions and says a person adds it', async () => {
    const inner = await h.view('guest')
    const view = credentialView(inner, naming, { credential: 'stdio' })
    expect(view.activateTool()?.description).toMatch(/launched with \(--skills\)/)
    expect(view.activateTool()?.description).not.toMatch(/403/)
    const refused = (await view.callBuiltin('mycelium__activate_skill', { name: 'reader' }, noCtx))!
    expect(refused.isError).toBe(true)
    const [explanation, instructions] = (refused.content as Array<{ text: string }>).map((c) => c.text)
    expect(explanation).toMatch(
      /^Skill reader is not active, and this client cannot activate it: .*\/add reader in myc chat, or a relaunch of myc serve with --skills reader\./,
    )
    expect(instructions).toBe('Reader instructions.')
    expect(inner.describe!().activeSkills.map((s) => s.name)).toEqual(['common'])
    expect(text((await view.callBuiltin('mycelium__activate_skill', { name: 'common' }, noCtx))!)).toBe(
      'Skill common is already active.\n\nEcho things.',
    )
  })

  it('open mode has no built-ins and nothing to step up to', () => {
    const view = credentialView(openView(), naming)
    expect(view.builtinTools()).toEqual([])
    expect(view.activateTool()).toBeUndefined()
    expect(view.skillToStepUp('mycelium__activate_skill', { name: 'x' })).toBeUndefined()
  })
})

describe('credentialView: the lists it makes', () => {
  it('keeps one activate_skill definition while the view’s own is the same, so a list rebuilt (a policy rebuilt on a catalogue change) is not a list changed', () => {
    const activate = {
      name: 'mycelium__activate_skill',
      description: 'activates',
      inputSchema: { type: 'object' as const },
    }
    const list = { name: 'mycelium__list_skills', inputSchema: { type: 'object' as const } }
    let own = activate
    // A new array every time, as a rebuilt policy gives.
    const view = credentialView({ ...openView(), builtinTools: () => [list, own] }, naming)
    const first = view.builtinTools()
    const again = view.builtinTools()
    expect(again[1]).toBe(first[1])
    expect(again[0]).toBe(list)
    expect(first[1]?.description).not.toBe('activates')
    own = { ...activate }
    expect(view.builtinTools()[1]).not.toBe(first[1])
  })
})
