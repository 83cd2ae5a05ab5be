import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { openRawSession } from '../helpers/http-face.js'
import { startHttpMyc, type HttpMyc } from '../helpers/http.js'
import { waitFor } from '../helpers/wait-for.js'

const TOKEN = 'low-0123456789abcdef0123456789abcdef0123'

/**
 * Memory is the process's own, so this one runs build/myc.cjs: forty
 * concurrent 4 MB calls with one id from one token are each answered at
 * once (one served, the rest refused as reused ids, or past the
 * credential's cap), five bursts in a row, and leave myc's resident memory
 * within 150 MiB of where it was. Before, 39 stayed in flight for minutes
 * and took myc from 118 MB to 1 GB (630 MB after); then each served answer
 * stayed kept for a resumed stream (8 MB of text and the child's 8 MB
 * line), and each refused body was read whole first, so five bursts took
 * myc from 142 to 495 MiB, still 411 MiB after 20 s idle. Now an answer
 * over the session's 4 MiB of kept events is not kept, and a body whose
 * id comes first is refused from its first bytes: 135 to ~265 MiB over
 * the bursts, ~150 once the garbage collector has given back what it
 * freed. RSS breathes with the collector, which may take a while to
 * shrink the heap of an idle process, hence the wait.
 */
describe('forty 4 MB calls with one id from one token (build/myc.cjs)', () => {
  let m: HttpMyc
  beforeAll(async () => {
    m = await startHttpMyc(
      writeConfig({
        mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } },
        http: { tokens: [{ env: 'MYC_BOUNDS_TOKEN', role: 'guest' }] },
      }),
      { env: { MYC_BOUNDS_TOKEN: TOKEN } },
    )
  }, 30_000)
  afterAll(async () => {
    await m?.stop()
  })

  /**
   * One POST on its own connection (no keep-alive: a connection left idle
   * while a slow call runs could be closed by the server just as it is
   * reused): the HTTP status and the JSON-RPC answer, from JSON or SSE.
   */
  const post = (session: string, body: string) =>
    new Promise<{ status: number; answer: Record<string, unknown> }>((resolve, reject) => {
      const req = httpRequest(
        m.url,
        {
          method: 'POST',
          agent: false,
          headers: {
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            Authorization: `Bearer ${TOKEN}`,
            'Mcp-Session-Id': session,
            'MCP-Protocol-Version': '2025-11-25',
          },
        },
        (res) => {
          let text = ''
          res.setEncoding('utf8').on('data', (d: string) => (text += d))
          res.on('end', () => {
            const data = text.split('\n').find((l) => l.startsWith('data: {'))
            resolve({
              status: res.statusCode!,
              answer: JSON.parse(data ? data.slice(6) : text) as Record<string, unknown>,
            })
          })
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${m.proc.pid}/status`, 'utf8'))![1]) / 1024

  it('are each answered at once, and leave the memory where it was', async () => {
    const session = (await openRawSession(m.url, TOKEN)).id!
    const big = 'x'.repeat(4_000_000)
    const call = (id: number) =>
      post(
        session,
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'echo__echo', arguments: { message: big } },
        }),
      )
    // Once first, so what is measured is the forty, not what any first call costs.
    expect((await call(0)).status).toBe(200)
    const before = rssMiB()
    for (const burst of [1, 2, 3, 4, 5]) {
      const answers = await Promise.all(Array.from({ length: 40 }, () => call(burst)))
      const served = answers.filter((a) => a.status === 200)
      const refused = answers.filter((a) => a.status !== 200)
      expect(served.length).toBeGreaterThanOrEqual(1)
      for (const a of served)
        expect((a.answer as { result: { content: Array<{ text: string }> } }).result.content[0]!.text).toHaveLength(
          4_000_000,
        )
      for (const a of refused)
        expect(a.answer).toMatchObject({
          jsonrpc: '2.0',
          error: {
            message: expect.stringMatching(new RegExp(`request id ${burst} is already in flight|Too Many Requests`)),
          },
        })
      console.log(
        `burst ${burst}: myc RSS ${rssMiB().toFixed(0)} MiB once all were answered (${before.toFixed(0)} MiB before; ${served.length} served, ${refused.length} refused)`,
      )
    }
    await waitFor(
      () => rssMiB() < before + 150,
      60_000,
      `myc's memory to be within 150 MiB of the ${before.toFixed(0)} MiB it had before`,
    )
  }, 180_000)
})
