import type { Server } from 'node:http'
import type { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { waitFor } from '../helpers/runtime.js'
import {
  alive,
  firstText,
  peopleFace,
  perPersonEntry,
  personClient,
  scopedRuntime,
  whoami,
  type Person,
} from '../helpers/scoped.js'

/**
 * A server with `scope: "session"` (docs/team.md): one process per MCP
 * session, started with the session's first call and gone, process and
 * all, when the session ends (its DELETE, or its idle end). The process
 * table is the judge.
 */
describe('scope "session": one process per MCP session, ended with it', () => {
  let runtime: Runtime
  const servers: Server[] = []
  const open: Client[] = []
  const session = async (url: string, person: Person) => {
    const connected = await personClient(url, person)
    open.push(connected.client)
    return connected
  }

  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime({ browser: perPersonEntry({ scope: 'session', env: {} }) }))
  }, 30_000)
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => {})))
    for (const s of servers) s.close()
    await runtime?.close()
  })

  it('starts a process per session, even two of one person, with no state crossing; DELETE ends it', async () => {
    const { url, server } = await peopleFace(runtime)
    servers.push(server)
    const first = await session(url, 'alice')
    const second = await session(url, 'alice')
    const bobs = await session(url, 'bob')
    const pids = await Promise.all(
      [first, second, bobs].map(async (s) => (await whoami(s.client, 'browser__whoami')).pid),
    )
    expect(new Set(pids).size).toBe(3)
    await first.client.callTool({ name: 'browser__remember', arguments: { value: 'first' } })
    const recalled = await second.client.callTool({ name: 'browser__recall', arguments: {} })
    expect(JSON.parse(firstText(recalled))).toEqual({ memory: null, file: null })

    await (first.transport as StreamableHTTPClientTransport).terminateSession()
    await waitFor(() => !alive(pids[0]!), 5_000, 'the ended session’s process to be gone')
    expect(runtime.supervisor.instances().some((i) => i.pid === pids[0])).toBe(false)
    // The others go on.
    expect(alive(pids[1]!) && alive(pids[2]!)).toBe(true)
    expect((await whoami(second.client, 'browser__whoami')).pid).toBe(pids[1])
  }, 30_000)

  it('ends a session’s process when the session ends for being idle', async () => {
    const { face, url, server } = await peopleFace(runtime, { sessionIdleMs: 300 })
    servers.push(server)
    face.sessions.startSweeping()
    const idle = await session(url, 'bob')
    const pid = (await whoami(idle.client, 'browser__whoami')).pid
    await waitFor(() => !alive(pid), 10_000, 'the idle session’s process to be gone')
    await face.close(0)
  }, 30_000)
})
