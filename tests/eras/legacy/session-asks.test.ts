import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../../src/runtime/runtime.js'
import { connectClient, fixtureEntry, startRuntime } from '../../helpers/runtime.js'
import { callOk } from '../../helpers/scoped.js'

/**
 * A 2025 session taken over from another replica (http/shared-sessions.ts
 * restores what the store kept): its log level and its subscriptions are
 * asked of this process's children again, as if the client had just set
 * them. A real child process that reports what it was asked; the client
 * over an in-memory transport.
 */
describe('a restored session asks the children again (eras/legacy/session-asks.ts)', () => {
  let runtime: Runtime
  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { pp: fixtureEntry('per-person') } })
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
  })

  it('sends the kept level and subscriptions to the child, and keeps them as the session’s state', async () => {
    const { client, connection } = await connectClient(runtime, { capabilities: {} })
    expect(await callOk(client, 'pp__level')).toBe('unset')
    await connection.restoreSessionState({ subscriptions: ['person://cookie'], logLevel: 'debug' })
    expect(await callOk(client, 'pp__level')).toBe('debug')
    expect(await callOk(client, 'pp__subscribed')).toEqual(['person://cookie'])
    expect(connection.sessionState).toEqual({ subscriptions: ['person://cookie'], logLevel: 'debug' })
  })
})
