import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { bundle, connectToMyc, npmServer, protocolErrorOf, runMyc, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'

type Found = {
  tools: Array<{ name: string; description: string; inputSchema: { properties?: Record<string, unknown> } }>
}
const text = (result: { content?: unknown }) =>
  (result.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('')

/**
 * Lazy open mode (session.lazyTools) on an open config of 100+ tools: the
 * reference servers everything, filesystem and memory, and a generated
 * 80-tool child, through build/myc.cjs over real stdio.
 */
describe('lazy open mode: search_tools and call_tool instead of every tool (build/myc.cjs)', () => {
  let config: string
  let client: Client
  beforeAll(async () => {
    const workspace = mkdtempSync(path.join(tmpdir(), 'myc-lazy-'))
    writeFileSync(path.join(workspace, 'notes.txt'), 'lazy but complete\n')
    const servers = {
      everything: { command: process.execPath, args: [npmServer('server-everything'), 'stdio'] },
      fs: { command: process.execPath, args: [npmServer('server-filesystem'), workspace] },
      memory: {
        command: process.execPath,
        args: [npmServer('server-memory')],
        env: { MEMORY_FILE_PATH: path.join(workspace, 'memory.jsonl') },
      },
      many: { command: process.execPath, args: [fixtureServer('many-tools')] },
    }
    config = writeConfig({ mcpServers: servers, session: { lazyTools: true } })
    ;({ client } = await connectToMyc(['serve', '--config', config]))
  }, 60_000)
  afterAll(async () => {
    await client?.close()
  })

  it('lists two tools, where open mode lists every one', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(['mycelium__search_tools', 'mycelium__call_tool'])
  })

  it('search_tools finds a tool by words of its description, with its input schema', async () => {
    const result = await client.callTool({ name: 'mycelium__search_tools', arguments: { query: 'archive a shipment' } })
    const found = (result.structuredContent as Found).tools
    expect(found[0]).toMatchObject({
      name: 'many__shipment_archive',
      description: expect.stringContaining('Archives a shipment'),
    })
    expect(Object.keys(found[0]!.inputSchema.properties ?? {})).toEqual(['id', 'filter', 'limit'])
    const files = (
      await client.callTool({
        name: 'mycelium__search_tools',
        arguments: { query: 'read the contents of a file', limit: 3 },
      })
    ).structuredContent as Found
    expect(files.tools.length).toBeLessThanOrEqual(3)
    expect(files.tools.map((t) => t.name).some((n) => n.startsWith('fs__read'))).toBe(true)
  })

  it('call_tool calls what search found, as a direct call by name does', async () => {
    const through = await client.callTool({
      name: 'mycelium__call_tool',
      arguments: { name: 'many__invoice_get', arguments: { id: '7' } },
    })
    expect(text(through)).toBe('invoice_get {"id":"7"}')
    const direct = await client.callTool({ name: 'many__invoice_get', arguments: { id: '7' } })
    expect(direct.content).toEqual(through.content)
    const file = await client.callTool({
      name: 'mycelium__call_tool',
      arguments: { name: 'fs__read_text_file', arguments: { path: 'notes.txt' } },
    })
    expect(text(file)).toContain('lazy but complete')
  })

  it('call_tool of a tool that does not exist answers as the direct call does; bad arguments are a tool error naming the field', async () => {
    const viaCall = await protocolErrorOf(() =>
      client.callTool({ name: 'mycelium__call_tool', arguments: { name: 'nope__never', arguments: {} } }),
    )
    const direct = await protocolErrorOf(() => client.callTool({ name: 'nope__never', arguments: {} }))
    expect(viaCall).toBe(direct)
    const noName = await client.callTool({ name: 'mycelium__call_tool', arguments: {} })
    expect(noName.isError).toBe(true)
    expect(text(noName)).toMatch(/needs "name"/)
    const badArgs = await client.callTool({
      name: 'mycelium__call_tool',
      arguments: { name: 'many__invoice_get', arguments: 'id=7' },
    })
    expect(badArgs.isError).toBe(true)
    expect(text(badArgs)).toMatch(/"arguments" must be an object/)
    const itself = await client.callTool({
      name: 'mycelium__call_tool',
      arguments: { name: 'mycelium__call_tool', arguments: {} },
    })
    expect(text(itself)).toMatch(/cannot call itself/)
  })

  it('myc tokens --json: 100+ tools in open mode, and lazy mode at most 5% of their tokens', () => {
    const r = runMyc(['tokens', '--json', '--config', config])
    expect(r.code, r.stderr).toBe(0)
    const report = JSON.parse(r.stdout) as {
      open: { tools: number; tokens: number }
      lazy: { tools: number; tokens: number; ratio: number; on: boolean }
    }
    expect(report.open.tools).toBeGreaterThanOrEqual(100)
    expect(report.lazy).toMatchObject({ tools: 2, on: true })
    expect(report.lazy.ratio).toBeLessThanOrEqual(0.05)
    console.log(
      `lazy open mode: ${report.lazy.tokens} of ${report.open.tokens} tokens (${(report.lazy.ratio * 100).toFixed(1)}%), ${report.open.tools} tools`,
    )
  })

  it('with skills, the key does nothing and myc says so', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-lazy-policy-'))
    mkdirSync(path.join(dir, 'skills', 'a'), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', 'a', 'SKILL.md'),
      '---\nname: a\ndescription: A\nallowedRoles: [dev]\nallowedTools: ["many:*"]\n---\nA.\n',
    )
    const file = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: { many: { command: process.execPath, args: [fixtureServer('many-tools')] } },
        session: { lazyTools: true },
      }),
    )
    const r = runMyc(['tools', '--json', '--role', 'dev', '--config', file])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain('session.lazyTools applies to open mode only')
    expect((JSON.parse(r.stdout) as { tools: Array<{ id: string }> }).tools.map((t) => t.id)).toContain(
      'mycelium:activate_skill',
    )
  })

  it('a 2026-07-28 client gets the same two tools and the same call_tool', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bundle, 'serve', '--era', 'auto', '--config', config],
      stderr: 'pipe',
    })
    const modern = new Client(
      { name: 'lazy-2026', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    )
    await modern.connect(transport)
    try {
      expect((await modern.listTools(undefined, { cacheMode: 'bypass' })).tools.map((t) => t.name)).toEqual([
        'mycelium__search_tools',
        'mycelium__call_tool',
      ])
      const through = await modern.callTool({
        name: 'mycelium__call_tool',
        arguments: { name: 'many__invoice_get', arguments: { id: '8' } },
      })
      expect(text(through)).toBe('invoice_get {"id":"8"}')
    } finally {
      await modern.close()
    }
  })
})
