import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Client } from '@modelcontextprotocol/client'
import { callsInFlight } from '../../bench/in-flight.js'
import { connectToMyc, startHttpFixture, writeConfig } from '../helpers/e2e.js'

/**
 * A child over Streamable HTTP under load, through build/myc.cjs: every call
 * answered, and myc's stderr free of Node's MaxListenersExceededWarning.
 * The SDK transport hands each request the same signal, and Node's fetch
 * left a listener on it per request until garbage collection: past 1,500,
 * one warning line per call (src/children/request-signals.ts).
 */
describe('myc serve with an HTTP child under load (build/myc.cjs)', () => {
  let child: Awaited<ReturnType<typeof startHttpFixture>> | undefined
  let client: Client
  let stderr = ''
  beforeAll(async () => {
    child = await startHttpFixture('echo')
    const url = child.url
    const connected = await connectToMyc([
      'serve',
      '--config',
      writeConfig({ mcpServers: { echo: { type: 'http', url } } }),
    ])
    client = connected.client
    connected.transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  }, 30_000)
  afterAll(async () => {
    await client?.close()
    child?.stop()
  })

  it('answers 2,500 calls at 32 in flight without a listener warning', async () => {
    let answered = 0
    await callsInFlight(2_500, 32, async () => {
      const result = await client.callTool({ name: 'echo__echo', arguments: { message: 'ping' } })
      if ((result.content as Array<{ text?: string }>)[0]?.text === 'ping') answered++
    })
    expect(answered).toBe(2_500)
    expect(stderr).not.toMatch(/MaxListenersExceededWarning/)
  }, 60_000)
})
