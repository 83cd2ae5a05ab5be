import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { credentialView } from '../../src/eras/modern/credential-view.js'
import { activateSkillDef, MAX_SKILL_ENUM, META_TOOL_DEFS } from '../../src/principal/meta-tools.js'
import { oneLine, rankTools, searchTerms, type ToolDoc } from '../../src/principal/tool-search.js'
import { repoRoot } from '../helpers/fixtures.js'
import { connectClient, PolicyHarness } from '../helpers/runtime.js'

const doc = (name: string, description: string, skills: string[] = ['s'], context?: string): ToolDoc => ({
  name,
  description,
  skills,
  active: false,
  ...(context ? { context } : {}),
})

describe('search_tools ranking (BM25, no network)', () => {
  const docs = [
    doc('fs__read_text_file', 'Read the complete contents of a file from the file system as text.', ['reader']),
    doc('fs__write_file', 'Create a new file or completely overwrite an existing file with new content.', ['editor']),
    doc('fs__edit_file', 'Make line-based edits to a text file.', ['editor']),
    doc('memory__search_nodes', 'Search for nodes in the knowledge graph based on a query.', ['reader']),
    doc(
      'mycelium__exec',
      'Runs a shell command in the workspace inside the sandbox.',
      ['git-workflow', 'test-runner'],
      'Run the project tests in the sandbox test tests ci failing',
    ),
  ]

  it('splits names and text into stemmed words, stop words out', () => {
    expect(searchTerms('fs__read_text_file')).toEqual(['fs', 'read', 'text', 'fil'])
    expect(searchTerms('readTextFile')).toEqual(['read', 'text', 'fil'])
    expect(searchTerms('Reading the files')).toEqual(searchTerms('read file'))
    expect(searchTerms('directories')).toEqual(searchTerms('directory'))
    expect(searchTerms('the a of')).toEqual([])
  })

  it('ranks by name first, then description, then the skills’ context', () => {
    expect(rankTools(docs, 'edit a file', 3).map((h) => h.name)[0]).toBe('fs__edit_file')
    expect(rankTools(docs, 'read file contents', 3).map((h) => h.name)[0]).toBe('fs__read_text_file')
    expect(rankTools(docs, 'knowledge graph', 3).map((h) => h.name)).toEqual(['memory__search_nodes'])
    // Only the context of its skills says "tests": found all the same.
    expect(rankTools(docs, 'run the failing tests', 3).map((h) => h.name)[0]).toBe('mycelium__exec')
  })

  it('leaves out what shares no word with the query, keeps to the limit, and keeps each document as given', () => {
    expect(rankTools(docs, 'zzqx wibble', 10)).toEqual([])
    expect(rankTools(docs, '   ', 10)).toEqual([])
    expect(rankTools([], 'file', 10)).toEqual([])
    expect(rankTools(docs, 'file', 2)).toHaveLength(2)
    const hit = rankTools(docs, 'shell', 1)[0]!
    expect(hit).toMatchObject({ name: 'mycelium__exec', skills: ['git-workflow', 'test-runner'], active: false })
    expect(hit.score).toBeGreaterThan(0)
  })

  it('cuts descriptions to one line', () => {
    expect(oneLine('\nFirst line.\nSecond line.')).toBe('First line.')
    expect(oneLine('x'.repeat(200), 20)).toBe(`${'x'.repeat(19)}…`)
  })
})

describe('the meta tools a policy session lists (tests/fixtures/policy/basic)', () => {
  const dir = path.join(repoRoot, 'tests/fixtures/policy/basic')
  const h = new PolicyHarness(() => loadConfig({ cwd: dir, env: process.env }))
  beforeAll(() => h.start())
  afterAll(() => h.close())
  const noCtx = () => ({ signal: new AbortController().signal })

  it('are short: one sentence each, no titles, no argument descriptions', () => {
    for (const [name, def] of Object.entries(META_TOOL_DEFS)) {
      expect(def.description!.length, name).toBeLessThanOrEqual(120)
      expect(def, name).not.toHaveProperty('title')
      expect(JSON.stringify(def.inputSchema), name).not.toContain('description')
    }
  })

  it('activate_skill names exactly the skills the role reaches (none disabled, none of another role)', async () => {
    const enumOf = async (role: string) => {
      const view = await h.view(role)
      const activate = view.builtinTools().find((t) => t.name === 'mycelium__activate_skill')!
      return (activate.inputSchema.properties as { name: { enum?: string[] } }).name.enum
    }
    expect(await enumOf('guest')).toEqual(['common', 'reader'])
    expect((await enumOf('developer'))!.sort()).toEqual(['common', 'reader', 'shell', 'writer'])
  })

  it('activate_skill names no skill when there is none, or too many to be worth their tokens', () => {
    expect(activateSkillDef([])).toBe(META_TOOL_DEFS.activate_skill)
    const many = Array.from({ length: MAX_SKILL_ENUM + 1 }, (_, i) => `skill-${i}`)
    expect(activateSkillDef(many)).toBe(META_TOOL_DEFS.activate_skill)
    expect(activateSkillDef(many.slice(1)).inputSchema.properties).toEqual({
      name: { type: 'string', enum: many.slice(1) },
    })
  })

  it('keeps the same definitions while the role reaches the same skills (a list rebuilt is not a list changed)', async () => {
    const view = await h.view('developer')
    const before = view.builtinTools()
    await view.activate!('reader', 'person')
    const after = view.builtinTools()
    expect(after).not.toBe(before)
    before.forEach((t, i) => expect(after[i]).toBe(t))
  })

  it('search_tools finds tools of inactive skills and names the skill to activate; activating it shows the tool', async () => {
    const { client } = await connectClient(h.runtime, { view: await h.view('developer') })
    const r = await client.callTool({ name: 'mycelium__search_tools', arguments: { query: 'add numbers' } })
    const hits = (
      r.structuredContent as { tools: Array<{ name: string; skills: string[]; active: boolean; description: string }> }
    ).tools
    expect(hits[0]).toEqual({
      name: 'echo__add',
      description: 'Adds a and b',
      skills: ['reader', 'writer'],
      active: false,
    })
    expect((r.content as Array<{ text: string }>)[0]!.text).toMatch(
      /^- echo__add \(skill: reader or writer\): Adds a and b/,
    )
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('echo__add')
    await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: hits[0]!.skills[0]! } })
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('echo__add')
    const again = await client.callTool({ name: 'mycelium__search_tools', arguments: { query: 'add', limit: 1 } })
    expect((again.structuredContent as { tools: Array<{ active: boolean }> }).tools).toMatchObject([{ active: true }])
    await client.close()
  })

  it('search_tools asks for a query, and says when nothing matches', async () => {
    const { client } = await connectClient(h.runtime, { view: await h.view('guest') })
    const empty = await client.callTool({ name: 'mycelium__search_tools', arguments: {} })
    expect(empty.isError).toBe(true)
    const none = await client.callTool({ name: 'mycelium__search_tools', arguments: { query: 'zzqx wibble' } })
    expect(none.isError).toBeFalsy()
    expect(none.structuredContent).toEqual({ tools: [] })
    await client.close()
  })

  it('is served by the 2026 face too (credentialView), over the credential role’s reach only', async () => {
    const view = credentialView(await h.view('guest'), { separator: '__', maxLength: 64 })
    expect(view.builtinTools().map((t) => t.name)).toContain('mycelium__search_tools')
    const r = (await view.callBuiltin(
      'mycelium__search_tools',
      { query: 'adds grows always fails sends log message', limit: 50 },
      noCtx,
    ))!
    const names = (r.structuredContent as { tools: Array<{ name: string }> }).tools.map((t) => t.name)
    expect(names).toContain('echo__add')
    for (const n of names) expect(['echo__echo', 'echo__add', 'echo__image']).toContain(n)
  })
})
