import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Client } from '@modelcontextprotocol/client'
import { createView } from '../../src/principal/policy-mode.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { createLogger } from '../../src/logger.js'
import { hasBwrap, runCode, testCodeRunner } from '../helpers/code-mode.js'
import { npmServer } from '../helpers/e2e.js'
import { connectClient, loadedConfig, startRuntime } from '../helpers/runtime.js'

/**
 * Every tool of the reference filesystem and memory servers, called from
 * code with arguments their own input schemas ask for; search_tools gives
 * each one's signature from those schemas. A tool the servers add later
 * fails the test until it is called here too.
 */
describe.runIf(hasBwrap)('code mode with the reference servers', () => {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'myc-code-fs-')))
  writeFileSync(path.join(root, 'picture.png'), Buffer.from('89504e470d0a1a0a', 'hex'))
  const raw = {
    mcpServers: {
      fs: { command: process.execPath, args: [npmServer('server-filesystem'), root] },
      memory: {
        command: process.execPath,
        args: [npmServer('server-memory')],
        env: { MEMORY_FILE_PATH: path.join(root, 'memory.jsonl') },
      },
    },
    session: { codeMode: true },
  }
  let runtime: Runtime
  let client: Client
  beforeAll(async () => {
    runtime = await startRuntime(raw)
    const codeRunner = await testCodeRunner(loadedConfig(raw))
    const view = createView({ kind: 'open' }, loadedConfig(raw), {
      env: {},
      catalogue: runtime.catalogue,
      logger: createLogger({ quiet: true }),
      codeRunner,
    })
    client = (await connectClient(runtime, { view })).client
  })
  afterAll(async () => {
    await client?.close()
    await runtime?.close()
  })

  /** Runs `code`, which returns an object of results by tool name; checks every tool of `server` was called. */
  async function callsEveryTool(server: string, code: string): Promise<Record<string, Record<string, unknown>>> {
    const r = await runCode(client, code)
    expect(r.isError, r.text).toBe(false)
    const results = JSON.parse(r.text) as Record<string, Record<string, unknown>>
    const names = runtime.catalogue
      .tools()
      .filter((t) => t.server === server)
      .map((t) => t.name)
    expect(Object.keys(results).sort()).toEqual(names.sort())
    return results
  }

  it('search_tools gives each tool’s signature from its real schemas', async () => {
    const found = await client.callTool({
      name: 'mycelium__search_tools',
      arguments: { query: 'write file', limit: 1 },
    })
    expect((found.structuredContent as { tools: Array<{ signature: string }> }).tools[0]!.signature).toBe(
      'tools.fs.write_file(args: { path: string; content: string }): Promise<{ content: string }>',
    )
  })

  it('calls every tool of server-filesystem from code', async () => {
    const p = (name: string) => JSON.stringify(path.join(root, name))
    const results = await callsEveryTool(
      'fs',
      `const fs = tools.fs
       const out = {}
       out.create_directory = await fs.create_directory({ path: ${p('dir')} })
       out.write_file = await fs.write_file({ path: ${p('dir/a.txt')}, content: 'alpha\\nbeta\\n' })
       out.edit_file = await fs.edit_file({ path: ${p('dir/a.txt')}, edits: [{ oldText: 'beta', newText: 'gamma' }] })
       out.read_text_file = await fs.read_text_file({ path: ${p('dir/a.txt')}, head: 1 })
       out.read_file = await fs.read_file({ path: ${p('dir/a.txt')} })
       out.read_multiple_files = await fs.read_multiple_files({ paths: [${p('dir/a.txt')}] })
       out.read_media_file = await fs.read_media_file({ path: ${p('picture.png')} })
       out.list_directory = await fs.list_directory({ path: ${p('dir')} })
       out.list_directory_with_sizes = await fs.list_directory_with_sizes({ path: ${p('dir')}, sortBy: 'size' })
       out.directory_tree = await fs.directory_tree({ path: ${p('dir')} })
       out.move_file = await fs.move_file({ source: ${p('dir/a.txt')}, destination: ${p('dir/b.txt')} })
       out.search_files = await fs.search_files({ path: ${JSON.stringify(root)}, pattern: '**/b.txt' })
       out.get_file_info = await fs.get_file_info({ path: ${p('dir/b.txt')} })
       out.list_allowed_directories = await fs.list_allowed_directories({})
       return out`,
    )
    expect(results.read_text_file).toEqual({ content: 'alpha' })
    expect(results.read_file!.content).toBe('alpha\ngamma\n')
    expect(results.list_directory!.content).toBe('[FILE] a.txt')
    expect(results.search_files!.content).toContain(path.join(root, 'dir', 'b.txt'))
    expect(results.read_media_file!.content).toMatchObject([{ type: 'image', mimeType: 'image/png' }])
  })

  it('calls every tool of server-memory from code', async () => {
    const results = await callsEveryTool(
      'memory',
      `const m = tools.memory
       const out = {}
       out.create_entities = await m.create_entities({ entities: [
         { name: 'ada', entityType: 'person', observations: ['wrote notes'] },
         { name: 'engine', entityType: 'machine', observations: [] },
       ] })
       out.create_relations = await m.create_relations({ relations: [{ from: 'ada', to: 'engine', relationType: 'described' }] })
       out.add_observations = await m.add_observations({ observations: [{ entityName: 'engine', contents: ['analytical'] }] })
       out.search_nodes = await m.search_nodes({ query: 'analytical' })
       out.open_nodes = await m.open_nodes({ names: ['ada'] })
       out.read_graph = await m.read_graph({})
       out.delete_observations = await m.delete_observations({ deletions: [{ entityName: 'ada', observations: ['wrote notes'] }] })
       out.delete_relations = await m.delete_relations({ relations: [{ from: 'ada', to: 'engine', relationType: 'described' }] })
       out.delete_entities = await m.delete_entities({ entityNames: ['ada', 'engine'] })
       return out`,
    )
    expect((results.search_nodes!.entities as Array<{ name: string }>).map((e) => e.name)).toEqual(['engine'])
    expect(results.read_graph!.relations).toEqual([{ from: 'ada', to: 'engine', relationType: 'described' }])
    expect(results.delete_entities).toMatchObject({ success: true })
  })
})
