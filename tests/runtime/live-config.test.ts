import { EventEmitter } from 'node:events'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { InMemoryTransport, Client } from '@modelcontextprotocol/client'
import { afterEach, describe, expect, it } from 'vitest'
import { watchConfig } from '../../src/runtime/live-config.js'
import { openRuntime } from '../../src/runtime/open-runtime.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { ClientConnection } from '../../src/eras/legacy/client-connection.js'
import { createView } from '../../src/principal/policy-mode.js'
import { captureLogger, fixtureEntry, waitFor } from '../helpers/runtime.js'
import { childSessions } from '../../src/eras/child-sessions.js'

const echo = fixtureEntry('echo')
const slow = fixtureEntry('progress')

/** A config file in a temp folder, a runtime over it as `myc serve` builds one, and a client connected to it. */
async function serveFile(
  config: Record<string, unknown>,
  options: { skills?: Record<string, string>; watch?: boolean } = {},
) {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-live-'))
  const file = path.join(dir, 'mycelium.config.json')
  const write = (next: Record<string, unknown> | string) =>
    writeFileSync(file, typeof next === 'string' ? next : JSON.stringify(next, null, 2))
  for (const [name, text] of Object.entries(options.skills ?? {})) {
    mkdirSync(path.join(dir, 'skills', name), { recursive: true })
    writeFileSync(path.join(dir, 'skills', name, 'SKILL.md'), text)
  }
  write(config)
  const { logger, lines } = captureLogger()
  const { runtime, loaded, mode } = await openRuntime({
    childSessions,
    configPath: file,
    logger,
    version: 'test',
    env: process.env,
  })
  const view = createView(mode, loaded, { env: {}, catalogue: runtime.catalogue, logger })
  await runtime.start()
  const signals = new EventEmitter()
  // Tests that reload by hand keep the watcher out of the way (its reload could run first and leave theirs nothing to do).
  const live = watchConfig({
    runtime,
    mode,
    logger,
    env: process.env,
    signals,
    debounceMs: options.watch ? 50 : 3_600_000,
  })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const connection = new ClientConnection({ runtime, view })
  await connection.connect(serverSide)
  const client = new Client({ name: 'live', version: '1' })
  let listChanged = 0
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    listChanged++
  })
  await client.connect(clientSide)
  const tools = async () => (await client.listTools()).tools.map((t) => t.name).sort()
  return {
    runtime,
    live,
    client,
    signals,
    lines,
    write,
    tools,
    listChanged: () => listChanged,
    close: async () => (live.stop(), await client.close(), await runtime.close()),
  }
}

describe('live config (myc serve keeps to its config file)', () => {
  let opened: Awaited<ReturnType<typeof serveFile>> | undefined
  afterEach(async () => {
    await opened?.close()
    opened = undefined
  })

  it('starts servers added, stops servers removed, restarts servers changed, and leaves the others and their calls alone', async () => {
    const s = (opened = await serveFile({ mcpServers: { a: echo, b: slow } }))
    const pid = (key: string) => (s.runtime as Runtime).supervisor.children.get(key)?.pid
    const [pidA, pidB] = [pid('a'), pid('b')]
    expect(pidA).toBeTypeOf('number')
    expect(await s.tools()).toContain('b__count')
    // A call on b is still running while the config changes.
    let progressed = 0
    const inFlight = s.client.callTool(
      { name: 'b__count', arguments: { steps: 8, stepMs: 100 } },
      { onprogress: () => void progressed++ },
    )
    await waitFor(() => progressed > 0, 5_000, 'the call on b to be running (its first progress)')
    s.write({ mcpServers: { a: { ...echo, env: { CHANGED: '1' } }, b: slow, c: echo } })
    const diff = await s.live.reload()
    expect(diff?.servers).toEqual({ added: ['c'], removed: [], changed: ['a'] })
    expect(pid('a')).not.toBe(pidA)
    expect(pid('a')).toBeTypeOf('number')
    expect(pid('b')).toBe(pidB)
    expect(JSON.stringify((await inFlight).content)).toContain('counted 8')
    expect(await s.tools()).toEqual(expect.arrayContaining(['a__echo', 'b__count', 'c__echo']))
    expect(s.listChanged()).toBeGreaterThan(0)

    const before = s.listChanged()
    s.write({ mcpServers: { a: { ...echo, env: { CHANGED: '1' } }, b: slow } })
    expect((await s.live.reload())?.servers).toEqual({ added: [], removed: ['c'], changed: [] })
    expect((await s.tools()).some((t) => t.startsWith('c__'))).toBe(false)
    await waitFor(() => s.listChanged() > before, 2_000, 'tools/list_changed after a removal')
    expect(pid('b')).toBe(pidB)
  }, 30_000)

  it('keeps the running config when an edit does not validate, and says which file, key and fix', async () => {
    const s = (opened = await serveFile({ mcpServers: { a: echo } }))
    const toolsBefore = await s.tools()
    s.write({ mcpServers: { a: { ...echo, command: 5 }, b: echo } })
    expect(await s.live.reload()).toBeUndefined()
    const error = s.lines.find((l) => l.includes('config not reloaded'))
    expect(error).toMatch(/mycelium\.config\.json/)
    expect(error).toMatch(/mcpServers\.a\.command/)
    expect(await s.tools()).toEqual(toolsBefore)
    s.write('{ "mcpServers": { "a": ')
    expect(await s.live.reload()).toBeUndefined()
    expect(s.lines.filter((l) => l.includes('config not reloaded')).at(-1)).toMatch(
      /Invalid JSON in .*mycelium\.config\.json at the end of the file/,
    )
    expect(await s.tools()).toEqual(toolsBefore)
  }, 30_000)

  it('reloads on SIGHUP and when the file changes on disk', async () => {
    const s = (opened = await serveFile({ mcpServers: { a: echo } }, { watch: true }))
    // The file watcher: a save is picked up a moment later.
    s.write({ mcpServers: { a: echo, w: echo } })
    await waitFor(async () => (await s.tools()).includes('w__echo'), 10_000, 'the watched edit')
    // SIGHUP: reread even if nothing announced the change (a removal: it starts no child).
    s.write({ mcpServers: { w: echo } })
    s.signals.emit('SIGHUP')
    await waitFor(async () => !(await s.tools()).includes('a__echo'), 10_000, 'the SIGHUP reload')
    expect(s.lines.some((l) => l.includes('SIGHUP: reloading the config'))).toBe(true)
  }, 30_000)

  it('in policy mode, judges skills against the new servers: a skill for a server added later comes alive', async () => {
    const skill =
      '---\nname: later\ndescription: Uses the server added later\nallowedRoles: [dev]\nallowedTools: [late:echo]\n---\nUse it.\n'
    const base = { skills: { dirs: ['skills'] }, roles: { default: 'dev' } }
    const s = (opened = await serveFile({ mcpServers: {}, ...base }, { skills: { later: skill } }))
    const activate = async () =>
      JSON.stringify(
        (await s.client.callTool({ name: 'mycelium__activate_skill', arguments: { name: 'later' } })).content,
      )
    // Strict loading: the skill names a server that is not configured, so it does not exist yet.
    expect(await activate()).not.toMatch(/is active/)
    expect(await s.tools()).not.toContain('late__echo')
    s.write({ mcpServers: { late: echo }, ...base })
    await s.live.reload()
    const answer = await activate()
    expect(answer).toMatch(/Skill later is active\. Tools added: late__echo/)
    expect(await s.tools()).toContain('late__echo')
  }, 30_000)
})
