import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { repoRoot } from '../helpers/fixtures.js'
import { ALICE, serveFace, type ServedFace } from '../helpers/http-face.js'
import { fixtureEntry, startRuntime } from '../helpers/runtime.js'

const MCP_REMOTE = path.join(repoRoot, 'node_modules', 'mcp-remote', 'dist', 'proxy.js')

/**
 * A real client that never ends its HTTP session: `mcp-remote` (an SDK
 * stdio client speaks to it; it speaks Streamable HTTP to myc's face, run
 * in this process with the default http.maxSessionsPerCredential of 16).
 * Thirty one-shot runs on one token all list and call: each new session
 * takes the place of the token's least recently used idle one, where the
 * seventeenth run used to get 429. Slow: thirty Node processes start.
 */
describe('30 one-shot mcp-remote runs on one token', () => {
  let runtime: Runtime
  let served: ServedFace
  const configDir = mkdtempSync(path.join(tmpdir(), 'myc-mcp-remote-'))

  beforeAll(async () => {
    runtime = await startRuntime({ mcpServers: { echo: fixtureEntry('echo') } })
    served = await serveFace(runtime, { maxSessionsPerCredential: 16 })
  }, 30_000)
  afterAll(async () => {
    await served?.close()
    await runtime?.close()
  })

  /** One run: mcp-remote started, tools listed, one call, mcp-remote gone (stdin closed), its session left behind. */
  async function oneShot(run: number): Promise<void> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, served.url, '--transport', 'http-only', '--header', 'Authorization:${MYC_AUTH}'],
      env: {
        ...(process.env as Record<string, string>),
        MYC_AUTH: `Bearer ${ALICE}`,
        MCP_REMOTE_CONFIG_DIR: configDir,
      },
      stderr: 'pipe',
    })
    let stderr = ''
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const client = new Client({ name: `one-shot-${run}`, version: '1' }, { capabilities: {} })
    try {
      await client.connect(transport)
      expect(
        (await client.listTools()).tools.map((t) => t.name),
        stderr,
      ).toContain('echo__echo')
      const result = (await client.callTool({ name: 'echo__echo', arguments: { message: `run ${run}` } })) as {
        content: Array<{ text: string }>
      }
      expect(result.content[0]!.text, stderr).toBe(`run ${run}`)
    } finally {
      // mcp-remote goes with its stdin, and never DELETEs its session.
      await client.close()
    }
  }

  it('all list and call; the token never holds more than its 16 sessions', async () => {
    // Three at a time (a person's few clients); the sessions left behind pile up past the cap all the same.
    for (let run = 1; run <= 30; run += 3) {
      await Promise.all([run, run + 1, run + 2].map((r) => oneShot(r)))
      // Only this token's sessions are open: never more than its cap.
      expect(served.face.sessions.size).toBeLessThanOrEqual(16)
    }
    expect(served.face.sessions.size).toBe(16)
  }, 180_000)
})
