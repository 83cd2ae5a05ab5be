import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBundle, writeConfig } from '../helpers/e2e.js'
import { RawClient } from '../helpers/raw-client.js'
import { hostileMessages, type HostileMessage } from '../helpers/hostile-messages.js'
import { fixtureEntry } from '../helpers/runtime.js'

const MAX_MESSAGE_BYTES = 64 * 1024

describe('myc serve (build/myc.cjs) under a barrage of hostile input', () => {
  let client: RawClient
  let counter = 0
  const nextId = () => `h-${++counter}`
  const echo = async (id: string, message: string) => {
    const answer = await client.request(id, 'tools/call', { name: 'echo__echo', arguments: { message } })
    return (answer.result?.structuredContent as { echoed?: string } | undefined)?.echoed
  }

  beforeAll(async () => {
    requireBundle()
    client = new RawClient(
      writeConfig({ mcpServers: { echo: fixtureEntry('echo') }, limits: { maxMessageBytes: MAX_MESSAGE_BYTES } }),
    )
    const init = await client.request('init', 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'hostile', version: '1' },
    })
    expect(init.result?.serverInfo).toMatchObject({ name: 'mycelium' })
    client.write('{"jsonrpc":"2.0","method":"notifications/initialized"}')
  }, 30_000)

  afterAll(() => {
    client?.proc.kill('SIGKILL')
  })

  it('answers each of 1,200 malformed and hostile messages as JSON-RPC says, while valid calls interleaved with them all succeed', async () => {
    const barrage: HostileMessage[] = hostileMessages(1_200, 20261123, nextId, { maxMessageBytes: MAX_MESSAGE_BYTES })
    const valid: Array<Promise<[string, string | undefined]>> = []
    for (const [i, message] of barrage.entries()) {
      client.write(message.line)
      if (i % 4 === 0) valid.push(echo(`v-${i}`, `valid ${i}`).then((echoed) => [`valid ${i}`, echoed]))
    }
    // Every valid call got its own answer back.
    for (const [sent, echoed] of await Promise.all(valid)) expect(echoed).toBe(sent)
    // Still alive and answering: a ping after everything.
    expect((await client.request('last-ping', 'ping')).result).toEqual({})

    const owedById = barrage.filter((m) => 'id' in m.owed)
    for (const m of owedById) {
      const owed = m.owed as { id: string; code?: number }
      const got = client.answers.get(JSON.stringify(owed.id)) ?? []
      expect(got.length, `${m.what}: answers for ${owed.id}`).toBe(1)
      if (owed.code !== undefined)
        expect((got[0] as { error?: { code: number } }).error?.code, `${m.what} (${owed.id})`).toBe(owed.code)
    }
    // Exactly one null-id answer per message whose id could not be read, and none for notifications.
    expect(client.nullIdAnswers.length).toBe(barrage.filter((m) => 'nullId' in m.owed).length)
    const expectedIds = new Set([
      ...owedById.map((m) => JSON.stringify((m.owed as { id: string }).id)),
      ...valid.map((_, i) => JSON.stringify(`v-${i * 4}`)),
      '"init"',
      '"last-ping"',
    ])
    expect([...client.answers.keys()].filter((k) => !expectedIds.has(k))).toEqual([])
    expect(client.notJsonRpc).toEqual([])
    expect(client.stderr).not.toMatch(/TypeError|RangeError|Uncaught|unhandled/i)
    // Every kind of hostile message was in the barrage.
    expect(new Set(barrage.map((m) => m.what.replace(/ for .*| in .*/, ''))).size).toBeGreaterThanOrEqual(15)
  }, 120_000)
})
