import path from 'node:path'
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { loadConfig } from '../../src/config/load.js'
import { createLogger } from '../../src/logger.js'
import { loadPolicyMode } from '../../src/principal/policy-mode.js'
import { repoRoot } from '../helpers/fixtures.js'
import { connectClient, PolicyHarness, uriAnswer } from '../helpers/runtime.js'

const dir = path.join(repoRoot, 'tests/fixtures/policy/basic')

describe('myc serves each role its skills over the Skills extension', () => {
  const h = new PolicyHarness(() => loadConfig({ cwd: dir, env: process.env }))
  beforeAll(() => h.start())
  afterAll(() => h.close())

  async function skillsFor(role: string) {
    const { client } = await connectClient(h.runtime, { view: await h.view(role) })
    return { client, skills: new SkillsClient(client) }
  }

  it('declares the extension with directoryRead', async () => {
    const { client, skills } = await skillsFor('guest')
    expect(skills.supported).toBe(true)
    expect(skills.directoryRead).toBe(true)
    await client.close()
  })

  it('lists what each role reaches, active or not, with private cache scope', async () => {
    const guest = await skillsFor('guest')
    const g = await guest.skills.list()
    expect(g.skills.map((s) => s.uri)).toEqual(['skill://mycelium/common/SKILL.md', 'skill://mycelium/reader/SKILL.md'])
    expect(g.cacheScope).toBe('private')
    const dev = await skillsFor('developer')
    expect((await dev.skills.list()).skills.map((s) => s.frontmatter.name)).toEqual([
      'common',
      'reader',
      'shell',
      'writer',
    ])
    await guest.client.close()
    await dev.client.close()
  })

  it('gets a skill and reads its files with verified digests, frontmatter verbatim', async () => {
    const { client, skills } = await skillsFor('guest')
    const { skill } = await skills.get('skill://mycelium/reader/SKILL.md')
    expect(skill.frontmatter).toMatchObject({
      name: 'reader',
      allowedRoles: ['guest', 'developer'],
      triggers: ['read'],
    })
    expect((skill.resources as Array<{ uri: string }>).map((r) => r.uri)).toEqual([
      'skill://mycelium/reader/SKILL.md',
      'skill://mycelium/reader/references/guide.md',
    ])
    const md = await skills.read(skill)
    expect(md.verified).toBe(true)
    expect(md.mimeType).toBe('text/markdown')
    expect(md.text).toBe(readFileSync(path.join(dir, 'skills/reader/SKILL.md'), 'utf8'))
    const guide = await skills.read(skill, 'references/guide.md')
    expect(guide.verified).toBe(true)
    expect(guide.text).toBe('# Reading guide\n\nRead carefully.\n')
    await client.close()
  })

  it('reads directories', async () => {
    const { client, skills } = await skillsFor('guest')
    const root = await skills.readDirectory('skill://mycelium/reader/')
    expect(root.resources.map((r) => [r.name, r.mimeType])).toEqual([
      ['references', 'inode/directory'],
      ['SKILL.md', 'text/markdown'],
    ])
    const refs = await skills.readDirectory('skill://mycelium/reader/references')
    expect(refs.resources.map((r) => r.uri)).toEqual(['skill://mycelium/reader/references/guide.md'])
    await client.close()
  })

  it('reading a SKILL.md does not activate the skill', async () => {
    const { client, skills } = await skillsFor('developer')
    const { skill } = await skills.get('skill://mycelium/writer/SKILL.md')
    await skills.read(skill)
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('grow__grow')
    await client.close()
  })

  it('answers hidden, disabled, escaping and never-existing URIs identically', async () => {
    const { client } = await skillsFor('guest')
    const answer = (method: string, uri: string) => uriAnswer(client, method, uri)
    for (const method of ['skills/get', 'resources/read', 'resources/directory/read']) {
      const never = await answer(method, 'skill://mycelium/never-existed/SKILL.md')
      expect(never).toMatch(/^(Skill|Resource) not found: <URI>$/)
      // A URI the guest does reach is answered (the probe can tell the difference).
      expect(
        await answer(
          method,
          method === 'resources/directory/read' ? 'skill://mycelium/reader/' : 'skill://mycelium/reader/SKILL.md',
        ),
      ).toBe('ok')
      for (const uri of [
        'skill://mycelium/writer/SKILL.md',
        'skill://mycelium/broken/SKILL.md',
        'skill://mycelium/reader/../writer/SKILL.md',
        'skill://mycelium/reader/%2E%2E/writer/SKILL.md',
        'skill://mycelium/reader%2F..%2Fwriter/SKILL.md',
        'skill://mycelium//etc/passwd',
        'file:///etc/passwd',
        'skill://mycelium/reader/../../../../etc/passwd',
      ]) {
        expect(await answer(method, uri), `${method} ${uri}`).toBe(
          never.replace('skill://mycelium/never-existed/SKILL.md', '<URI>'),
        )
      }
    }
    await client.close()
  })
})

describe('size caps', () => {
  it('a skill over skills.maxFileBytes is not served at all, and lint reports it', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { lintSkills } = await import('../../src/inspect/reports.js')
    const root = mkdtempSync(path.join(tmpdir(), 'myc-caps-'))
    for (const [name, size] of [
      ['small', 10],
      ['big', 5_000],
    ] as const) {
      mkdirSync(path.join(root, 'skills', name, 'assets'), { recursive: true })
      writeFileSync(
        path.join(root, 'skills', name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: d\nallowedRoles: [dev]\nallowedTools: []\n---\n`,
      )
      writeFileSync(path.join(root, 'skills', name, 'assets', 'data.bin'), Buffer.alloc(size, 1))
    }
    writeFileSync(
      path.join(root, 'mycelium.config.json'),
      JSON.stringify({ skills: { dirs: ['skills'], maxFileBytes: 1_000 } }),
    )
    const loaded = await loadConfig({ cwd: root, env: {} })
    const mode = await loadPolicyMode(loaded, { toolNamesOf: () => undefined }, createLogger({ quiet: true }))
    if (mode.kind !== 'policy') throw new Error('expected policy mode')
    expect([...mode.state.sources.skillIndex.keys()]).toEqual(['small'])
    const problems = lintSkills(mode.state.policy, [], mode.state.sources.unserved)
    expect(problems).toContainEqual(
      expect.objectContaining({
        skill: 'big',
        severity: 'error',
        message: expect.stringMatching(
          /not served over MCP: assets\/data\.bin is 5000 bytes, over skills\.maxFileBytes \(1000\)/,
        ),
      }),
    )
  })
})

describe('skill files changing on disk', () => {
  it('reloads the listing and tells the client (resources and tools list_changed)', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { watchSkills } = await import('../../src/principal/skill-watcher.js')
    const root = mkdtempSync(path.join(tmpdir(), 'myc-watch-'))
    const write = (name: string) => {
      mkdirSync(path.join(root, 'skills', name), { recursive: true })
      writeFileSync(
        path.join(root, 'skills', name, 'SKILL.md'),
        `---\nname: ${name}\ndescription: ${name}\nallowedRoles: [dev]\nallowedTools: []\n---\n`,
      )
    }
    write('first')
    writeFileSync(path.join(root, 'mycelium.config.json'), '{}')
    const h = new PolicyHarness(() => loadConfig({ cwd: root, env: {} }))
    await h.start()
    const stop = h.mode.kind === 'policy' ? watchSkills(h.loaded, h.mode.state, h.logger, 50) : () => {}
    try {
      const changed: string[] = []
      const { client } = await connectClient(h.runtime, {
        view: await h.view('dev'),
        setup: (c) => {
          c.setNotificationHandler('notifications/resources/list_changed', () => {
            changed.push('resources')
          })
          c.setNotificationHandler('notifications/tools/list_changed', () => {
            changed.push('tools')
          })
        },
      })
      const skills = new SkillsClient(client)
      expect((await skills.list()).skills.map((s) => s.frontmatter.name)).toEqual(['first'])
      write('second')
      const { waitFor } = await import('../helpers/runtime.js')
      await waitFor(async () => (await skills.list()).skills.length === 2, 5_000, 'the new skill')
      expect(changed).toContain('resources')
      rmSync(path.join(root, 'skills', 'first'), { recursive: true })
      await waitFor(
        async () => (await skills.list()).skills.map((s) => s.frontmatter.name).join() === 'second',
        5_000,
        'the removed skill to go',
      )
      await client.close()
    } finally {
      stop()
      await h.close()
    }
  })
})
