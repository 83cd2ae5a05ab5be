import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { connectClient, fixtureEntry, startRuntime, waitFor } from '../helpers/runtime.js'
import { childSessions } from '../../src/eras/child-sessions.js'

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('a crashing child', () => {
  let runtime: Runtime
  let client: Client
  const notes: string[] = []

  beforeAll(async () => {
    runtime = await startRuntime({
      mcpServers: {
        crash: fixtureEntry('crash', { restart: { maxRetries: 3, initialDelayMs: 200, maxDelayMs: 400 } }),
        echo: fixtureEntry('echo'),
      },
    })
    ;({ client } = await connectClient(runtime, {
      setup: (c) => {
        c.setNotificationHandler('notifications/tools/list_changed', () => {
          notes.push('tools')
        })
        c.setNotificationHandler('notifications/prompts/list_changed', () => {
          notes.push('prompts')
        })
      },
    }))
  })
  afterAll(async () => {
    await client?.close()
    await runtime?.close()
  })

  it('fails the in-flight call at once, drops its tools, tells the client, and comes back', async () => {
    const before = (await client.listTools()).tools.map((t) => t.name)
    expect(before).toContain('crash__echo')
    const firstPid = Number(
      ((await client.callTool({ name: 'crash__pid', arguments: {} })).content as Array<{ text: string }>)[0]!.text,
    )

    // At once: the answer is the crash's (not the call's timeout, which would say so).
    const result = await client.callTool({ name: 'crash__crash', arguments: {} })
    expect(result.isError).toBe(true)
    expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(
      /Server "crash" stopped before answering \(it crashed and is being restarted\)/,
    )

    // Its tools are gone, the other child's are untouched, and the client was told.
    await waitFor(
      async () => !(await client.listTools()).tools.some((t) => t.name.startsWith('crash__')),
      3_000,
      'crash tools to leave',
    )
    expect((await client.listTools()).tools.some((t) => t.name === 'echo__echo')).toBe(true)
    expect(notes).toContain('tools')
    // A call to it meanwhile is told it is restarting (tests/runtime/server-down.test.ts).
    expect(isAlive(firstPid)).toBe(false)

    // It is restarted with backoff, and its tools come back.
    await waitFor(
      async () => (await client.listTools()).tools.some((t) => t.name === 'crash__echo'),
      10_000,
      'crash tools to return',
    )
    const secondPid = Number(
      ((await client.callTool({ name: 'crash__pid', arguments: {} })).content as Array<{ text: string }>)[0]!.text,
    )
    expect(secondPid).not.toBe(firstPid)
    expect(runtime.supervisor.children.get('crash')!.state).toBe('RUNNING')
    const echoed = await client.callTool({ name: 'echo__echo', arguments: { message: 'still here' } })
    expect(echoed.content).toEqual([{ type: 'text', text: 'still here' }])
  })
})

describe('children that fail to start', () => {
  it('marks a child that hangs in initialize FAILED after its own timeout, without holding up the others', async () => {
    const runtime = await startRuntime({
      mcpServers: {
        stuck: fixtureEntry('hang', {
          env: { HANG_ON: 'initialize' },
          startupTimeoutMs: 600,
          restart: { maxRetries: 0, initialDelayMs: 100, maxDelayMs: 100 },
        }),
        missing: {
          command: '/nonexistent/definitely-not-here',
          restart: { maxRetries: 0, initialDelayMs: 100, maxDelayMs: 100 },
        },
        echo: fixtureEntry('echo'),
      },
    })
    try {
      const stuck = runtime.supervisor.children.get('stuck')!
      const missing = runtime.supervisor.children.get('missing')!
      expect(stuck.state).toBe('FAILED')
      expect(stuck.lastError).toMatch(/600 ms/)
      expect(missing.state).toBe('FAILED')
      expect(missing.lastError).toMatch(/command not found: "\/nonexistent\/definitely-not-here"/)
      expect(runtime.supervisor.children.get('echo')!.state).toBe('RUNNING')
      expect(runtime.catalogue.tools().map((t) => t.id)).toContain('echo:echo')
    } finally {
      await runtime.close()
    }
  })

  it('starts a lazy child on first use', async () => {
    const runtime = await startRuntime({ mcpServers: { later: fixtureEntry('echo', { startup: 'lazy' }) } })
    try {
      expect(runtime.supervisor.children.get('later')!.state).toBe('STOPPED')
      expect(await runtime.supervisor.ensureRunning('later')).toBe(true)
      expect(runtime.catalogue.tools().some((t) => t.id === 'later:echo')).toBe(true)
    } finally {
      await runtime.close()
    }
  })
})

describe('stopping', () => {
  it('ends every child and its descendants', async () => {
    const runtime = await startRuntime({ mcpServers: { tree: fixtureEntry('spawns-grandchild') } })
    const { client } = await connectClient(runtime)
    const pids = JSON.parse(
      ((await client.callTool({ name: 'tree__pids', arguments: {} })).content as Array<{ text: string }>)[0]!.text,
    ) as { self: number; grandchild: number }
    expect(isAlive(pids.self)).toBe(true)
    expect(isAlive(pids.grandchild)).toBe(true)
    await client.close()
    await runtime.close()
    await waitFor(() => !isAlive(pids.self) && !isAlive(pids.grandchild), 6_000, 'child and grandchild to exit')
  })
})

describe('a slow child', () => {
  it('starts within its own startupTimeoutMs while a fast one is already up', async () => {
    const { createLogger } = await import('../../src/logger.js')
    const { Runtime } = await import('../../src/runtime/runtime.js')
    const { hostForThisProcess } = await import('../../src/runtime/host.js')
    const { loadedConfig } = await import('../helpers/runtime.js')
    const runtime = new Runtime({
      childSessions,
      loaded: loadedConfig({
        mcpServers: {
          slow: fixtureEntry('slow-start', { env: { SLOW_START_MS: '1200' }, startupTimeoutMs: 10_000 }),
          fast: fixtureEntry('echo'),
        },
      }),
      logger: createLogger({ quiet: true }),
      version: 'test',
      host: hostForThisProcess(),
    })
    const started = runtime.start()
    try {
      await waitFor(() => runtime.supervisor.children.get('fast')!.state === 'RUNNING', 5_000, 'fast child')
      expect(runtime.supervisor.children.get('slow')!.state).toBe('INITIALIZING')
      await started
      expect(runtime.supervisor.children.get('slow')!.state).toBe('RUNNING')
      expect(
        runtime.catalogue
          .tools()
          .map((t) => t.id)
          .slice(0, 2),
      ).toEqual(['slow:echo', 'fast:echo'])
    } finally {
      await runtime.close()
    }
  })
})

describe('health pings', () => {
  it('restart a child that stops answering while it stays alive', async () => {
    const runtime = await startRuntime({
      mcpServers: {
        silent: fixtureEntry('goes-silent', {
          env: { SILENT_AFTER_MS: '600' },
          pingIntervalMs: 300,
          restart: { maxRetries: 3, initialDelayMs: 100, maxDelayMs: 200 },
        }),
      },
    })
    try {
      const child = runtime.supervisor.children.get('silent')!
      const firstPid = child.pid
      expect(child.state).toBe('RUNNING')
      await waitFor(
        () => child.pid !== undefined && child.pid !== firstPid && child.state === 'RUNNING',
        15_000,
        'a restarted child',
      )
      expect(isAlive(firstPid!)).toBe(false)
    } finally {
      await runtime.close()
    }
  })
})
