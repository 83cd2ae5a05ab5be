import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { captureLogger, connectClient, fixtureEntry, startRuntime } from '../helpers/runtime.js'

/**
 * A server that declares resources but answers resources/templates/list
 * with Method not found (the SDK's low-level Server without a handler for
 * it) is still served: its tools and resources are listed, it has no
 * templates, and the log says why. Before, the failed list failed its whole
 * start and none of its tools was listed. A real child process.
 */
describe('a child without resources/templates/list, or resources/list', () => {
  let runtime: Runtime
  const { logger, lines } = captureLogger()
  beforeAll(async () => {
    const watched = fixtureEntry('watched-resources', { env: { NO_TEMPLATES: '1' } })
    const bare = fixtureEntry('watched-resources', { env: { NO_TEMPLATES: '1', NO_RESOURCES: '1' } })
    runtime = await startRuntime({ mcpServers: { watched, bare } }, logger)
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
  })

  it('is running with its tools and resources listed, no templates, and a warning naming the method', async () => {
    expect(runtime.supervisor.children.get('watched')!.state).toBe('RUNNING')
    const { client } = await connectClient(runtime)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('watched__touch')
    expect((await client.listResources()).resources.length).toBeGreaterThan(0)
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([])
    expect(lines.some((l) => l.includes('[watched]') && l.includes('resources/templates/list'))).toBe(true)
  })

  it('one that answers neither resources/list: running, its tools listed, none of its resources', async () => {
    expect(runtime.supervisor.children.get('bare')!.state).toBe('RUNNING')
    const { client } = await connectClient(runtime)
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('bare__touch')
    expect((await client.listResources()).resources.every((r) => !r.uri.includes('bare'))).toBe(true)
    expect(runtime.supervisor.children.get('bare')!.lists.resources).toEqual([])
    expect(lines.some((l) => l.includes('[bare]') && l.includes('resources/list: the server declares it'))).toBe(true)
  })
})
