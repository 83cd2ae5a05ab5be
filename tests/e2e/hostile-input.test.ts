import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { hostileMessages, type HostileMessage } from '../helpers/hostile-messages.js'
import { fixtureEntry } from '../helpers/runtime.js'

const MAX_MESSAGE_BYTES = 64 * 1024

/**
 * `myc serve` spoken to line by line, as a hostile client would: every line
 * on stdout must be a JSON-RPC message, and every answer is recorded by id.
 */
class RawClient {
  readonly proc: ChildProcessWithoutNullStreams
  readonly answers = new Map<string, unknown[]>()
  readonly nullIdAnswers: unknown[] = []
  readonly notJsonRpc: string[] = []
  stderr = ''
  private buffer = ''
  private waiters = new Map<string, (answer: unknown) => void>()
  readonly exited: Promise<number | null>

  constructor(config: string) {
    this.proc = spawn(process.execPath, [bundle, 'serve', '--config', config], { stdio: 'pipe' })
    this.exited = new Promise((resolve) => this.proc.once('exit', (code) => resolve(code)))
    this.proc.stderr.setEncoding('utf8')
    this.proc.stderr.on('data', (chunk: string) => {
      this.stderr += chunk
    })
    this.proc.stdout.setEncoding('utf8')
    this.proc.stdout.on('data', (chunk: string) => {
      this.buffer += chunk
      let nl: number
      while ((nl = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, nl)
        this.buffer = this.buffer.slice(nl + 1)
        this.onLine(line)
      }
    })
  }

  private onLine(line: string): void {
    let message: { jsonrpc?: unknown; id?: unknown; method?: unknown }
    try {
      message = JSON.parse(line)
    } catch {
      this.notJsonRpc.push(line)
      return
    }
    if (message.jsonrpc !== '2.0') this.notJsonRpc.push(line)
    if (message.method !== undefined) return // a notification or request from myc
    if (message.id === null) {
      this.nullIdAnswers.push(message)
      return
    }
    const key = JSON.stringify(message.id)
    this.answers.set(key, [...(this.answers.get(key) ?? []), message])
    this.waiters.get(key)?.(message)
    this.waiters.delete(key)
  }

  write(line: string | Buffer): void {
    this.proc.stdin.write(Buffer.concat([typeof line === 'string' ? Buffer.from(line) : line, Buffer.from('\n')]))
  }

  request(id: string, method: string, params?: unknown): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
    const answer = new Promise<unknown>((resolve) => this.waiters.set(JSON.stringify(id), resolve))
    this.write(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }))
    return answer as never
  }

  rssKiB(): number {
    const status = readFileSync(`/proc/${this.proc.pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1])
  }
}

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
    client = new RawClient(writeConfig({ mcpServers: { echo: fixtureEntry('echo') }, limits: { maxMessageBytes: MAX_MESSAGE_BYTES } }))
    const init = await client.request('init', 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } })
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
      if (owed.code !== undefined) expect((got[0] as { error?: { code: number } }).error?.code, `${m.what} (${owed.id})`).toBe(owed.code)
    }
    // Exactly one null-id answer per message whose id could not be read, and none for notifications.
    expect(client.nullIdAnswers.length).toBe(barrage.filter((m) => 'nullId' in m.owed).length)
    const expectedIds = new Set([...owedById.map((m) => JSON.stringify((m.owed as { id: string }).id)), ...valid.map((_, i) => JSON.stringify(`v-${i * 4}`)), '"init"', '"last-ping"'])
    expect([...client.answers.keys()].filter((k) => !expectedIds.has(k))).toEqual([])
    expect(client.notJsonRpc).toEqual([])
    expect(client.stderr).not.toMatch(/TypeError|RangeError|Uncaught|unhandled/i)
    // Every kind of hostile message was in the barrage.
    expect(new Set(barrage.map((m) => m.what.replace(/ for .*| in .*/, ''))).size).toBeGreaterThanOrEqual(15)
  }, 120_000)

  it('keeps its memory flat over a 60,000-call soak with junk in between', async () => {
    const payload = 'p'.repeat(2_048)
    const inFlight = 32
    let sent = 0
    let baseline = 0
    const run = async (until: number) => {
      const lanes = Array.from({ length: inFlight }, async () => {
        while (sent < until) {
          const n = sent++
          if (n % 10 === 0) client.write(n % 20 === 0 ? 'null' : `{"jsonrpc":"2.0","id":"s-junk-${n}","method":"tools/call","params":{"name":${n}}}`)
          const echoed = await echo(`s-${n}`, `${n}${payload}`)
          if (echoed !== `${n}${payload}`) throw new Error(`call ${n} came back as ${String(echoed).slice(0, 40)}`)
        }
      })
      await Promise.all(lanes)
    }
    await run(5_000)
    baseline = client.rssKiB()
    // RSS sampled every 2,500 calls: the heap breathes (V8 sizes it by the allocation rate, more on a busy
    // machine), so compare the lowest points of an early and a late window, which a leak lifts and breathing does not.
    const samples: number[] = []
    for (let at = 7_500; at <= 60_000; at += 2_500) {
      await run(at)
      samples.push(client.rssKiB())
    }
    const early = Math.min(...samples.slice(0, 6)) // 7,500 … 20,000 calls
    const late = Math.min(...samples.slice(-8)) // 42,500 … 60,000 calls
    const growthMiB = (late - early) / 1024
    console.error(`soak: RSS ${Math.round(baseline / 1024)} MiB after 5,000 calls; lowest ${Math.round(early / 1024)} MiB in 7,500-20,000, ${Math.round(late / 1024)} MiB in 42,500-60,000 (${growthMiB.toFixed(1)} MiB); samples ${samples.map((k) => Math.round(k / 1024)).join(' ')}`)
    // Retaining the ~30,000 calls of 2 KiB between the windows would add ~60 MiB; a third of that fails.
    expect(growthMiB).toBeLessThan(20)
    // The junk got its answers too.
    expect(client.answers.get('"s-junk-10"')).toHaveLength(1)
    client.proc.stdin.end()
    expect(await client.exited).toBe(0)
  }, 180_000)
})
