import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { npmServer } from '../helpers/e2e.js'
import { connectClient, startRuntime, waitFor } from '../helpers/runtime.js'

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
    srv.on('error', reject)
  })
}

async function startEverything(mode: 'streamableHttp' | 'sse', port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [npmServer('server-everything'), mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let ready = false
  child.stderr!.on('data', (d: Buffer) => {
    if (/listening|running/i.test(d.toString())) ready = true
  })
  await waitFor(() => ready, 15_000, `server-everything ${mode} to listen`)
  return child
}

describe('HTTP children', () => {
  const procs: ChildProcess[] = []
  let httpPort = 0
  let ssePort = 0
  let proxyPort = 0
  const seenAuth: string[] = []
  let proxy: http.Server

  beforeAll(async () => {
    httpPort = await freePort()
    ssePort = await freePort()
    procs.push(await startEverything('streamableHttp', httpPort), await startEverything('sse', ssePort))
    // A pass-through proxy that records the Authorization header myc sends.
    proxy = http.createServer((req, res) => {
      seenAuth.push(String(req.headers.authorization))
      const upstream = http.request(
        { host: '127.0.0.1', port: httpPort, path: req.url, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        },
      )
      req.pipe(upstream)
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    proxyPort = (proxy.address() as { port: number }).port
  }, 40_000)

  afterAll(async () => {
    for (const p of procs) p.kill('SIGKILL')
    proxy?.close()
  })

  it('connects over Streamable HTTP, over SSE, and falls back from HTTP to SSE', async () => {
    const runtime = await startRuntime({
      mcpServers: {
        streamable: { type: 'http', url: `http://127.0.0.1:${httpPort}/mcp` },
        legacy: { type: 'sse', url: `http://127.0.0.1:${ssePort}/sse` },
        fallback: { type: 'http', url: `http://127.0.0.1:${ssePort}/sse` },
      },
    })
    try {
      for (const key of ['streamable', 'legacy', 'fallback']) {
        const child = runtime.supervisor.children.get(key)!
        expect(child.state, `${key}: ${child.lastError}`).toBe('RUNNING')
        expect(child.lists.tools.some((t) => t.name === 'echo')).toBe(true)
      }
      const { client } = await connectClient(runtime)
      for (const key of ['streamable', 'legacy', 'fallback']) {
        const result = await client.callTool({ name: `${key}__echo`, arguments: { message: key } })
        expect((result.content as Array<{ text: string }>)[0]!.text).toContain(key)
      }
      await client.close()
    } finally {
      await runtime.close()
    }
  })

  it('sends the configured headers (with ${VAR} expanded)', async () => {
    process.env.MYC_TEST_TOKEN = 'sekrit-token-123'
    const runtime = await startRuntime({
      mcpServers: {
        viaProxy: {
          type: 'http',
          url: `http://127.0.0.1:${proxyPort}/mcp`,
          headers: { Authorization: 'Bearer ${MYC_TEST_TOKEN}' },
        },
      },
    })
    try {
      expect(runtime.supervisor.children.get('viaProxy')!.state).toBe('RUNNING')
      expect(seenAuth.length).toBeGreaterThan(0)
      expect(seenAuth.every((h) => h === 'Bearer sekrit-token-123')).toBe(true)
    } finally {
      await runtime.close()
      delete process.env.MYC_TEST_TOKEN
    }
  })
})
