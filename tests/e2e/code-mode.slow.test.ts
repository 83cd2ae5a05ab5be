import { realpathSync } from 'node:fs'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Client } from '@modelcontextprotocol/client'
import { codeProject, FORGED_CALL, hasBwrap, runCode, runnerProcesses } from '../helpers/code-mode.js'
import { connectToMyc, protocolErrorOf, runMyc } from '../helpers/e2e.js'
import { repoRoot } from '../helpers/fixtures.js'
import { connectHttp, modernRequest, startHttpMyc, type HttpMyc } from '../helpers/http.js'
import { OtlpReceiver } from '../helpers/otlp-receiver.js'
import { waitFor } from '../helpers/wait-for.js'

/** What issue 37 asks of code mode through a real client, the same over stdio and over HTTP. */
function codeModeThrough(connect: () => Promise<Client>): void {
  let client: Client
  beforeAll(async () => {
    client = await connect()
  })
  afterAll(() => client?.close())

  it('return await tools.echo.echo({ message: "hi" }) gives "hi"', async () => {
    expect(await runCode(client, "return await tools.echo.echo({ message: 'hi' })")).toEqual({
      text: '"hi"',
      isError: false,
    })
  })

  it('Object.keys(tools) names only the servers the session reaches', async () => {
    expect(JSON.parse((await runCode(client, 'return Object.keys(tools)')).text)).toEqual(['mycelium', 'echo'])
  })

  it('a hidden tool fails from the code byte for byte as one that does not exist, as it does for the client', async () => {
    const r = await runCode(
      client,
      `${FORGED_CALL}return [await ask(1e9, 'echo__fail'), await ask(1e9 + 1, 'echo__none')]`,
    )
    const [hidden, missing] = JSON.parse(r.text) as string[]
    expect(hidden!.replace('echo__fail', 'X')).toBe(missing!.replace('echo__none', 'X'))
    const direct = await protocolErrorOf(() => client.callTool({ name: 'echo__fail', arguments: {} }))
    expect(direct.replace('echo__fail', 'X')).toBe(
      (await protocolErrorOf(() => client.callTool({ name: 'echo__none', arguments: {} }))).replace('echo__none', 'X'),
    )
  })

  it('a skill activated inside the run makes its tools callable from then on', async () => {
    const r = await runCode(
      client,
      `const before = typeof tools.echo.add
       await tools.mycelium.activate_skill({ name: 'math' })
       return [before, await tools.echo.add({ a: 20, b: 22 })]`,
    )
    expect(JSON.parse(r.text)).toEqual(['undefined', '42'])
    await waitFor(() => runnerProcesses().length === 0, 10_000, 'the run’s processes to end')
  })
}

describe.runIf(hasBwrap)('code mode through build/myc.cjs', () => {
  describe('over stdio', () => {
    codeModeThrough(async () => (await connectToMyc(['serve', '--config', codeProject()])).client)
  })

  describe('over Streamable HTTP', () => {
    let myc: HttpMyc
    afterAll(() => myc?.stop())
    codeModeThrough(async () => {
      myc = await startHttpMyc(codeProject())
      return (await connectHttp(myc.url)).client
    })
  })

  it('gives the code none of myc’s environment', async () => {
    const canary = 'canary-5f2b9e'
    const { client } = await connectToMyc(['serve', '--config', codeProject()], {
      env: { MYC_TEST_SECRET: canary, ANTHROPIC_API_KEY: canary },
    })
    const r = await runCode(
      client,
      `const fs = require('node:fs')
       const environ = (p) => { try { return fs.readFileSync(p, 'utf8') } catch (e) { return e.code } }
       return [JSON.stringify(process.env), environ('/proc/1/environ'), environ('/proc/self/environ')]`,
    )
    expect(r.isError).toBe(false)
    expect(r.text).not.toContain(canary)
    await client.close()
  })

  it('starts the runner through the launcher, its code cache beside the bundle shown read-only', async () => {
    const cache = path.join(realpathSync(path.join(repoRoot, 'build')), '.code-cache')
    const { client } = await connectToMyc(['serve', '--config', codeProject()])
    const r = await runCode(
      client,
      `const fs = require('node:fs')
       let write
       try { fs.writeFileSync(${JSON.stringify(path.join(cache, 'planted.bin'))}, 'x'); write = 'written' } catch (e) { write = e.code }
       return [fs.existsSync(${JSON.stringify(cache)}), write]`,
    )
    expect(JSON.parse(r.text)).toEqual([true, 'EROFS'])
    await client.close()
  })

  it('is not offered where no sandbox runs it (sandbox.executor none), and myc doctor says why', async () => {
    const config = codeProject({ sandbox: { executor: 'none' } })
    const { client } = await connectToMyc(['serve', '--config', config])
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).not.toContain('mycelium__run_code')
    expect(names).toContain('echo__echo')
    expect(
      await protocolErrorOf(() => client.callTool({ name: 'mycelium__run_code', arguments: { code: '' } })),
    ).toMatch(/Unknown tool: mycelium__run_code/)
    await client.close()
    const check = (file: string) =>
      (
        JSON.parse(runMyc(['doctor', '--json', '--config', file]).stdout) as { checks: Array<{ name: string }> }
      ).checks.find((c) => c.name === 'code mode')
    expect(check(config)).toEqual({
      name: 'code mode',
      status: 'fail',
      detail: 'run_code is not offered: sandbox.executor is "none", and code mode never runs code without a sandbox',
      fix: 'set sandbox.executor to "auto" or "bubblewrap"',
    })
    // agent.codeMode alone asks for code mode too.
    const agentOnly = codeProject({
      session: { defaultSkills: ['common'] },
      agent: { codeMode: true },
      sandbox: { executor: 'none' },
    })
    expect(check(agentOnly)).toMatchObject({ name: 'code mode', status: 'fail' })
    expect(check(codeProject({ session: { defaultSkills: ['common'] } }))).toBeUndefined()
    expect(check(codeProject())).toEqual({
      name: 'code mode',
      status: 'ok',
      detail: expect.stringMatching(
        /^run_code is offered: bubblewrap, 30000 ms, 256 MB, (JavaScript only|TypeScript types stripped)$/,
      ),
    })
  })

  it('counts each inner call against http.rateLimit, as a request of the credential', async () => {
    const myc = await startHttpMyc(codeProject({ http: { rateLimit: { requestsPerMinute: 6, burst: 8 } } }))
    try {
      const { client } = await connectHttp(myc.url)
      const r = await runCode(
        client,
        `const seen = []
         for (let i = 0; i < 10; i++) {
           try { seen.push(await tools.echo.echo({ message: 'x' })) } catch (e) { seen.push(e.message) }
         }
         return seen`,
      )
      const seen = JSON.parse(r.text) as string[]
      const refused = seen.filter((s) => s !== 'x')
      expect(seen.length - refused.length).toBeLessThan(8)
      expect(refused.length).toBeGreaterThan(2)
      expect(refused[0]).toMatch(/^Too Many Requests: over 6 requests a minute for this credential; retry in \d+ s$/)
      await client.close().catch(() => {}) // Its DELETE may be over the limit too.
    } finally {
      await myc.stop()
    }
  })

  it('runs for a 2026-07-28 request too, its inner calls counted against the credential’s http.rateLimit', async () => {
    const myc = await startHttpMyc(codeProject({ http: { rateLimit: { requestsPerMinute: 6, burst: 6 } } }))
    try {
      const code = `const seen = []
        for (let i = 0; i < 8; i++) {
          try { seen.push(await tools.echo.echo({ message: 'x' })) } catch (e) { seen.push(e.message) }
        }
        return [Object.keys(tools), Object.keys(tools.mycelium), seen]`
      const { answer } = await modernRequest(myc.url, 'tools/call', { name: 'mycelium__run_code', arguments: { code } })
      const [servers, mycelium, seen] = JSON.parse((answer.result!.content as Array<{ text: string }>)[0]!.text) as [
        string[],
        string[],
        string[],
      ]
      expect(servers).toEqual(['mycelium', 'echo'])
      // A 2026 request's skills are its credential's: nothing to deactivate.
      expect(mycelium).toEqual(['search_tools', 'list_skills', 'activate_skill', 'get_context'])
      // The burst less the request itself; the bucket refills one request every 10 s, so a slow run may get one more.
      const ok = seen.filter((s) => s === 'x').length
      expect(ok).toBeGreaterThanOrEqual(5)
      expect(ok).toBeLessThan(8)
      expect(seen.slice(ok)).toEqual(
        Array(8 - ok).fill(expect.stringMatching(/^Too Many Requests: over 6 requests a minute/)),
      )
    } finally {
      await myc.stop()
    }
  })

  describe('telemetry', () => {
    let receiver: OtlpReceiver
    beforeEach(async () => {
      receiver = new OtlpReceiver()
      await receiver.start()
    })
    afterEach(() => receiver.close())

    it('each inner call is a span under the tools/call mycelium__run_code span', async () => {
      const { client } = await connectToMyc(['serve', '--config', codeProject()], {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '50',
        },
      })
      await runCode(client, "await tools.echo.echo({ message: 'a' }); return await tools.echo.echo({ message: 'b' })")
      await client.close()
      await waitFor(() => receiver.spans.length >= 5, 10_000, 'the spans at the receiver')
      const run = receiver.spans.find((s) => s.name === 'tools/call mycelium__run_code')!
      const inner = receiver.spans.filter((s) => s.name === 'tools/call echo__echo')
      expect(inner).toHaveLength(2)
      for (const span of inner) expect(span).toMatchObject({ traceId: run.traceId, parentSpanId: run.spanId })
      // Each inner call's own call to the child is under it, as for a client's call.
      const child = receiver.spans.filter((s) => s.name === 'tools/call echo')
      expect(child.map((s) => s.parentSpanId).sort()).toEqual(inner.map((s) => s.spanId).sort())
    })
  })
})
