import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import path from 'node:path'
import type { Client, Tool } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { initProject } from '../../src/inspect/scaffold.js'
import { BUILTIN_SERVER } from '../../src/policy/policy.js'
import { BuiltinRunner } from '../../src/principal/builtin-exec.js'
import { toolTokens } from '../../src/principal/token-count.js'
import { openView } from '../../src/principal/view.js'
import { visibleTools } from '../../src/runtime/principal-tools.js'
import { repoRoot } from '../helpers/fixtures.js'
import { connectClient, PolicyHarness } from '../helpers/runtime.js'

const META = [
  'mycelium__list_skills',
  'mycelium__activate_skill',
  'mycelium__deactivate_skill',
  'mycelium__get_context',
  'mycelium__search_tools',
]

/**
 * `myc init`'s own project (filesystem and memory servers, seven skills),
 * model-free: what a session costs at start, and that a model that knows
 * nothing but the first tools/list still reaches every tool its role may use.
 * The project sits under the repo's node_modules, so its `npx -y` servers
 * resolve to the installed packages (no download).
 */
describe("myc init's project: a small first tools/list, and every reachable tool still reached", () => {
  let dir = ''
  const h = new PolicyHarness(() => loadConfig({ cwd: dir, env: process.env }))
  const clients: Client[] = []

  beforeAll(async () => {
    const base = path.join(repoRoot, 'node_modules', '.cache')
    mkdirSync(base, { recursive: true })
    dir = path.join(mkdtempSync(path.join(base, 'myc-budget-')), 'project')
    await initProject(dir)
    await h.start()
    await Promise.all([...h.runtime.supervisor.children.keys()].map((key) => h.runtime.supervisor.ensureRunning(key)))
    if (h.mode.kind === 'policy') h.mode.state.invalidate()
  }, 60_000)
  afterAll(async () => {
    for (const c of clients) await c.close()
    await h.close()
    if (dir) rmSync(path.dirname(dir), { recursive: true, force: true })
  })

  const policy = () => {
    if (h.mode.kind !== 'policy') throw new Error('init makes a policy-mode project')
    return h.mode.state.policy
  }
  // As `myc serve` runs it: the sandboxed built-ins exist (listed only; nothing runs here).
  const runner = () => new BuiltinRunner({ run: () => Promise.reject(new Error('not run')) }, h.loaded.config, dir, [])
  const session = async (role: string) => {
    const { client } = await connectClient(h.runtime, { view: await h.view(role, { runner: runner() }) })
    clients.push(client)
    return client
  }
  const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name)
  /** What the role may use with every skill it reaches active: the catalogue's tools and the built-ins, by the pure policy alone. */
  const reachable = (role: string) => {
    const filter = policy().filter(
      role,
      new Set(
        policy()
          .reachable(role)
          .map((s) => s.name),
      ),
    )
    const children = h.runtime.catalogue
      .tools()
      .filter((e) => filter.toolVisible(e.server, e.name))
      .map((e) => e.wireName)
    const builtins = ['exec', 'run_script', 'save_memory', 'recall_memory', 'list_memories']
      .filter((n) => filter.toolVisible(BUILTIN_SERVER, n))
      .map((n) => `mycelium__${n}`)
    return [...builtins, ...children]
  }

  it('starts a developer session with the meta tools alone, at most 10% of open mode (JSON characters / 4)', async () => {
    const open = visibleTools(h.runtime, openView()).map((t) => t.def)
    expect(open.length).toBeGreaterThanOrEqual(20)
    const fresh = await session('developer')
    expect(await names(fresh)).toEqual(META)
    const served = visibleTools(h.runtime, await h.view('developer', { runner: runner() })).map((t) => t.def)
    expect(served.map((t) => t.name)).toEqual(META)
    const ratio = toolTokens(served) / toolTokens(open)
    expect(ratio).toBeLessThanOrEqual(0.1)
    // What the client received weighs the same (nothing added on the way).
    expect(toolTokens((await fresh.listTools()).tools)).toBeLessThanOrEqual(Math.ceil(toolTokens(open) * 0.1))
  })

  it.each(['developer', 'guest', 'reviewer', 'admin'])(
    '%s: activating each skill activate_skill names reaches every tool the role may use',
    async (role) => {
      const client = await session(role)
      const activate = (await client.listTools()).tools.find((t) => t.name === 'mycelium__activate_skill') as Tool
      const offered = (activate.inputSchema.properties as { name: { enum: string[] } }).name.enum
      expect([...offered].sort()).toEqual(
        policy()
          .reachable(role)
          .map((s) => s.name)
          .sort(),
      )
      for (const skill of offered) {
        const r = await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: skill } })
        expect(r.isError, skill).toBeFalsy()
      }
      const listed = await names(client)
      const want = reachable(role)
      expect(want.length).toBeGreaterThan(5)
      expect(listed.filter((n) => !META.includes(n)).sort()).toEqual([...want].sort())
    },
  )

  it('developer: search_tools finds each reachable tool by its name, and the first skill it names brings the tool in, in one step', async () => {
    for (const wire of reachable('developer')) {
      const client = await session('developer')
      const words = wire.split('__').slice(1).join(' ').replaceAll('_', ' ')
      const r = await client.callTool({ name: 'mycelium__search_tools', arguments: { query: words, limit: 5 } })
      const hit = (r.structuredContent as { tools: Array<{ name: string; skills: string[] }> }).tools.find(
        (t) => t.name === wire,
      )
      expect(hit, `${wire} for "${words}"`).toBeDefined()
      await client.callTool({ name: 'mycelium__activate_skill', arguments: { name: hit!.skills[0]! } })
      expect(await names(client), wire).toContain(wire)
      await client.close()
    }
  }, 60_000)

  it('developer: search_tools answers plain requests with the right tool and skill near the top', async () => {
    const client = await session('developer')
    const top = async (query: string) =>
      (
        (await client.callTool({ name: 'mycelium__search_tools', arguments: { query, limit: 3 } }))
          .structuredContent as { tools: Array<{ name: string; skills: string[] }> }
      ).tools
    expect((await top('edit a file')).map((t) => t.name)).toContain('fs__edit_file')
    expect((await top('run the tests')).find((t) => t.name === 'mycelium__exec')?.skills).toContain('test-runner')
    expect((await top('search the knowledge graph')).map((t) => t.name)).toContain('memory__search_nodes')
    expect((await top('git commit')).map((t) => t.name)).toContain('mycelium__exec')
  })
})
