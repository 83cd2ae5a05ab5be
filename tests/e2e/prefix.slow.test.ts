import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { connectToMyc } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'

/** A child mounted unprefixed (`prefix: false`) or under another word, through build/myc.cjs serve. */
describe('server prefixes (build/myc.cjs serve)', () => {
  const echo = { command: process.execPath, args: [fixtureServer('echo')] }

  it('serves the main child under its own names, a helper under its prefix, and calls and prompts reach them', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-prefix-'))
    const config = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { main: { ...echo, prefix: false }, helper: { ...echo, prefix: 'h' }, plain: echo },
      }),
    )
    const { client } = await connectToMyc(['serve', '--config', config])
    try {
      const names = (await client.listTools()).tools.map((t) => t.name)
      expect(names).toEqual(expect.arrayContaining(['echo', 'add', 'h__echo', 'plain__echo']))
      expect(names).not.toContain('main__echo')
      expect(names).not.toContain('helper__echo')
      const r = (await client.callTool({ name: 'echo', arguments: { message: 'bare' } })) as {
        content: Array<{ text: string }>
      }
      expect(r.content[0]!.text).toBe('bare')
      const h = (await client.callTool({ name: 'h__echo', arguments: { message: 'via h' } })) as {
        content: Array<{ text: string }>
      }
      expect(h.content[0]!.text).toBe('via h')
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(
        expect.arrayContaining(['greet', 'h__greet', 'plain__greet']),
      )
    } finally {
      await client.close()
    }
  }, 30_000)

  it('policy still speaks of server keys: a skill granting main:echo shows the unprefixed tool, and only that', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-prefix-'))
    mkdirSync(path.join(dir, 'skills', 'main-tools'), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', 'main-tools', 'SKILL.md'),
      '---\nname: main-tools\ndescription: main\nallowedRoles: [dev]\nallowedTools: ["main:echo"]\n---\n',
    )
    const config = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { main: { ...echo, prefix: false }, helper: { ...echo, prefix: 'h' } },
        session: { metaTools: false },
      }),
    )
    const { client } = await connectToMyc(['serve', '--config', config, '--role', 'dev', '--skills', 'main-tools'])
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo'])
      await expect(client.callTool({ name: 'h__echo', arguments: { message: 'x' } })).rejects.toThrow(
        /Unknown tool: h__echo/,
      )
    } finally {
      await client.close()
    }
  }, 30_000)
})
