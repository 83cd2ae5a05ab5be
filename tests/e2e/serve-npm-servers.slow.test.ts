import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../helpers/wait-for.js'
import { connectToMyc, descendants, isAlive, npmServer, writeConfig } from '../helpers/e2e.js'

// What myc declares to its children; a direct client declares the same so
// that server-everything registers the same conditional tools for both.
const childCaps = { elicitation: { form: {}, url: {} }, sampling: {}, roots: { listChanged: true } }

describe('myc serve (build/myc.cjs) in front of the real npm servers', () => {
  const workspace = mkdtempSync(path.join(tmpdir(), 'myc-fs-'))
  writeFileSync(path.join(workspace, 'hello.txt'), 'hello from the workspace\n')
  const servers = {
    everything: { command: 'node', args: [npmServer('server-everything'), 'stdio'] },
    memory: {
      command: 'node',
      args: [npmServer('server-memory')],
      env: { MEMORY_FILE_PATH: path.join(workspace, 'memory.jsonl') },
    },
    fs: { command: 'node', args: [npmServer('server-filesystem'), workspace] },
  }
  let client: Client
  let transport: StdioClientTransport
  const direct = new Map<string, Client>()

  beforeAll(async () => {
    const config = writeConfig({ mcpServers: servers })
    ;({ client, transport } = await connectToMyc(['--config', config], {
      capabilities: childCaps,
      setup: (c) => c.setRequestHandler('roots/list', () => ({ roots: [{ uri: `file://${workspace}`, name: 'ws' }] })),
    }))
    for (const [key, s] of Object.entries(servers)) {
      const c = new Client({ name: 'direct', version: '1' }, { capabilities: childCaps })
      c.setRequestHandler('roots/list', () => ({ roots: [{ uri: `file://${workspace}`, name: 'ws' }] }))
      await c.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: s.args,
          env: { ...(process.env as Record<string, string>), ...(s as { env?: Record<string, string> }).env },
        }),
      )
      direct.set(key, c)
    }
  }, 60_000)

  afterAll(async () => {
    for (const c of direct.values()) await c.close()
    await client?.close()
  })

  it('shows every tool, prompt and resource of every child exactly once under its namespaced name', async () => {
    // server-everything adds tools after initialize: wait until myc lists what each child lists directly.
    const same = async () => {
      const ours = (await client.listTools()).tools.map((t) => t.name)
      for (const [key, c] of direct) {
        const theirs = (await c.listTools()).tools.map((t) => `${key}__${t.name}`).sort()
        if (JSON.stringify(ours.filter((t) => t.startsWith(`${key}__`)).sort()) !== JSON.stringify(theirs)) return false
      }
      return true
    }
    await waitFor(same, 10_000, 'the tools through myc to match each child’s own')
    const tools = (await client.listTools()).tools.map((t) => t.name)
    expect(new Set(tools).size).toBe(tools.length)
    for (const [key, c] of direct) {
      const theirs = (await c.listTools()).tools.map((t) => `${key}__${t.name}`)
      expect(tools.filter((t) => t.startsWith(`${key}__`)).sort()).toEqual(theirs.sort())
    }
    const prompts = (await client.listPrompts()).prompts.map((p) => p.name)
    const theirPrompts = (await direct.get('everything')!.listPrompts()).prompts.map((p) => `everything__${p.name}`)
    expect(prompts.sort()).toEqual(theirPrompts.sort())
    const resources = (await client.listResources()).resources.map((r) => r.uri)
    const theirResources = (await direct.get('everything')!.listResources()).resources.map((r) => r.uri)
    expect(resources.filter((u) => theirResources.includes(u)).sort()).toEqual([...theirResources].sort())
  })

  it('returns the same results as calling each child directly', async () => {
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ['everything', 'echo', { message: 'hello' }],
      ['everything', 'get-sum', { a: 2, b: 40 }],
      ['everything', 'get-tiny-image', {}],
      ['everything', 'get-structured-content', { location: 'New York' }],
      ['everything', 'get-annotated-message', { messageType: 'error', includeImage: true }],
      ['fs', 'read_text_file', { path: path.join(workspace, 'hello.txt') }],
      ['fs', 'list_allowed_directories', {}],
      ['memory', 'read_graph', {}],
    ]
    for (const [key, name, args] of cases) {
      const through = await client.callTool({ name: `${key}__${name}`, arguments: args })
      const straight = await direct.get(key)!.callTool({ name, arguments: args })
      expect(through, `${key}:${name}`).toEqual(straight)
    }
  })

  it('reads a resource and gets a prompt as the child serves them', async () => {
    const uri = (await direct.get('everything')!.listResources()).resources[0]!.uri
    expect(await client.readResource({ uri })).toEqual(await direct.get('everything')!.readResource({ uri }))
    const prompt = (await direct.get('everything')!.listPrompts()).prompts.find(
      (p) => !p.arguments?.some((a) => a.required),
    )!
    expect(await client.getPrompt({ name: `everything__${prompt.name}` })).toEqual(
      await direct.get('everything')!.getPrompt({ name: prompt.name }),
    )
  })

  it('forwards progress from server-everything with the client’s token', async () => {
    const progress: number[] = []
    const result = await client.callTool(
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } },
      { onprogress: (p) => progress.push(p.progress) },
    )
    // The SDK client may drop the last report when the result overtakes it (seen calling the child directly too).
    expect(progress.slice(0, 2)).toEqual([1, 2])
    expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(/Long running operation completed/)
  })

  it('cancels a long call at the client’s request', async () => {
    const controller = new AbortController()
    const call = client.callTool(
      { name: 'everything__trigger-long-running-operation', arguments: { duration: 20, steps: 20 } },
      { signal: controller.signal },
    )
    setTimeout(() => controller.abort('stop'), 200)
    await expect(call).rejects.toThrow()
    // myc keeps serving after the cancellation.
    const echoed = await client.callTool({ name: 'everything__echo', arguments: { message: 'after' } })
    expect((echoed.content as Array<{ text: string }>)[0]!.text).toContain('after')
  })

  it('passes task-augmented calls through and routes tasks/* to the child that runs the task', async () => {
    const { passthrough } = await import('../../src/protocol/passthrough.js')
    expect((client.getServerCapabilities() as { tasks?: unknown }).tasks).toBeDefined()
    const created = (await client.request(
      {
        method: 'tools/call',
        params: { name: 'everything__simulate-research-query', arguments: { topic: 'ants' }, task: { ttl: 60_000 } },
      },
      passthrough,
    )) as { task: { taskId: string; status: string } }
    expect(created.task.status).toBe('working')
    const got = (await client.request(
      { method: 'tasks/get', params: { taskId: created.task.taskId } },
      passthrough,
    )) as { taskId: string }
    expect(got.taskId).toBe(created.task.taskId)
    const listed = (await client.request({ method: 'tasks/list', params: {} }, passthrough)) as {
      tasks: Array<{ taskId: string }>
    }
    expect(listed.tasks.map((t) => t.taskId)).toContain(created.task.taskId)
    const result = (await client.request(
      { method: 'tasks/result', params: { taskId: created.task.taskId } },
      passthrough,
      { timeout: 30_000 },
    )) as { content: Array<{ text: string }> }
    expect(result.content[0]!.text).toMatch(/^# Research Report: ants/)
    await expect(
      client.request({ method: 'tasks/get', params: { taskId: 'no-such-task' } }, passthrough),
    ).rejects.toThrow(/Unknown task: no-such-task/)
  }, 30_000)

  it('leaves no process behind when the client goes away', async () => {
    const pid = transport.pid!
    const tree = descendants(pid)
    expect(tree.length).toBeGreaterThanOrEqual(3)
    await client.close()
    await waitFor(() => !isAlive(pid) && tree.every((p) => !isAlive(p)), 10_000, 'myc and its children to exit')
  })
})
