import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBundle, writeConfig } from '../helpers/e2e.js'
import { RawClient } from '../helpers/raw-client.js'
import { fixtureEntry } from '../helpers/runtime.js'

/** The long soak (npm run test:slow): 60,000 echo calls through `myc serve` with junk lines between them. */
describe('myc serve (build/myc.cjs) over a long soak', () => {
  let client: RawClient
  const echo = async (id: string, message: string) => {
    const answer = await client.request(id, 'tools/call', { name: 'echo__echo', arguments: { message } })
    return (answer.result?.structuredContent as { echoed?: string } | undefined)?.echoed
  }

  beforeAll(async () => {
    requireBundle()
    // A full collection on SIGUSR2 (bench/gc-on-signal.mjs) before each reading: what is kept, not what V8 has not yet collected.
    const gcOnSignal = fileURLToPath(new URL('../../bench/gc-on-signal.mjs', import.meta.url))
    client = new RawClient(writeConfig({ mcpServers: { echo: fixtureEntry('echo') } }), [
      '--expose-gc',
      '--import',
      gcOnSignal,
    ])
    const init = await client.request('init', 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'soak', version: '1' },
    })
    expect(init.result?.serverInfo).toMatchObject({ name: 'mycelium' })
    client.write('{"jsonrpc":"2.0","method":"notifications/initialized"}')
  }, 30_000)

  afterAll(() => {
    client?.proc.kill('SIGKILL')
  })

  it('keeps its memory flat over a 60,000-call soak with junk in between', async () => {
    const payload = 'p'.repeat(2_048)
    const inFlight = 32
    let sent = 0
    let baseline = 0
    const run = async (until: number) => {
      const lanes = Array.from({ length: inFlight }, async () => {
        while (sent < until) {
          const n = sent++
          if (n % 10 === 0)
            client.write(
              n % 20 === 0
                ? 'null'
                : `{"jsonrpc":"2.0","id":"s-junk-${n}","method":"tools/call","params":{"name":${n}}}`,
            )
          const echoed = await echo(`s-${n}`, `${n}${payload}`)
          if (echoed !== `${n}${payload}`) throw new Error(`call ${n} came back as ${String(echoed).slice(0, 40)}`)
        }
      })
      await Promise.all(lanes)
    }
    // RSS read after a full collection: without one, how much garbage is still held depends on when V8 last ran a
    // major collection (a myc that promotes little to the old generation may run none over the whole soak, and its
    // RSS then climbs by 20+ MiB of garbage, 2026-11-29). A leak survives the collection; garbage does not.
    const collectedRss = async () => {
      client.proc.kill('SIGUSR2')
      // The signal is handled on myc's next turn; a ping after it is answered once the collection is done.
      await client.request(`gc-${sent}`, 'ping', {})
      return client.rssKiB()
    }
    await run(5_000)
    baseline = await collectedRss()
    // RSS sampled every 2,500 calls; the lowest points of an early and a late window compared, which a leak lifts
    // and the heap's breathing does not.
    const samples: number[] = []
    for (let at = 7_500; at <= 60_000; at += 2_500) {
      await run(at)
      samples.push(await collectedRss())
    }
    const early = Math.min(...samples.slice(0, 6)) // 7,500 … 20,000 calls
    const late = Math.min(...samples.slice(-8)) // 42,500 … 60,000 calls
    const growthMiB = (late - early) / 1024
    console.error(
      `soak: RSS ${Math.round(baseline / 1024)} MiB after 5,000 calls; lowest ${Math.round(early / 1024)} MiB in 7,500-20,000, ${Math.round(late / 1024)} MiB in 42,500-60,000 (${growthMiB.toFixed(1)} MiB); samples ${samples.map((k) => Math.round(k / 1024)).join(' ')}`,
    )
    // Retaining the ~30,000 calls of 2 KiB between the windows would add ~60 MiB; a third of that fails.
    expect(growthMiB).toBeLessThan(20)
    // The junk got its answers too.
    expect(client.answers.get('"s-junk-10"')).toHaveLength(1)
    client.proc.stdin.end()
    expect(await client.exited).toBe(0)
  }, 180_000)
})
