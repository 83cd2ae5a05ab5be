/**
 * The peers `npm run bench` measures beside myc, each started the way its
 * own README says, in front of the same echo child. None is a dependency of
 * this repo and nothing here downloads one: each is found through an
 * environment variable naming a folder where it was installed or built, and
 * a peer that is not there is reported absent (with why), never guessed.
 *
 * - `MYC_BENCH_1MCP`: a checkout of 1MCP (github 1mcp-app/agent) built with
 *   its own build (`build/index.js`). Over stdio: `1mcp serve --transport
 *   stdio`; over HTTP: `1mcp serve --port <p>`, at `/mcp`.
 * - `MYC_BENCH_MCP_HUB`: a folder where `npm install mcp-hub` ran (or the
 *   package's own folder). HTTP only (`mcp-hub --port <p> --config <file>`,
 *   at `/mcp`, the older HTTP+SSE transport); it has no stdio face, so its
 *   stdio side is absent.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Client, SSEClientTransport, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

/** A side ready to be called: its client and the name the echo tool has there. */
export interface Connected {
  client: Client
  tool: string
  close: () => Promise<void>
}

/** A side that could not be measured, and why. */
export interface Absent {
  absent: string
}

export type PeerSide = Connected | Absent

export const isAbsent = (side: PeerSide): side is Absent => 'absent' in side

interface PeerEnv {
  env: Record<string, string>
  echo: { command: string; args: string[] }
}

/** The echo tool's name through an aggregator: the one listed tool ending in `echo` that is not a built-in. */
async function echoToolOf(client: Client, deadline: number): Promise<string> {
  for (;;) {
    const names = (await client.listTools()).tools.map((t) => t.name)
    const tool = names.find((n) => n !== 'echo' && n.endsWith('echo'))
    if (tool) return tool
    if (Date.now() > deadline) throw new Error(`no echo tool listed (tools: ${names.join(', ') || 'none'})`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

function configFile(name: string, body: unknown): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), `myc-bench-${name}-`)), 'mcp.json')
  writeFileSync(file, JSON.stringify(body))
  return file
}

const stop = async (proc: ChildProcess) => {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  proc.kill('SIGTERM')
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}

/** Connects over HTTP to a peer started as `proc`, retrying until it listens (or 60 s pass). */
async function httpPeer(proc: ChildProcess, transport: () => Transport, log: () => string): Promise<Connected> {
  const deadline = Date.now() + 60_000
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${log().slice(-500)}`)
    const client = new Client({ name: 'bench', version: '1' })
    try {
      await client.connect(transport())
      const tool = await echoToolOf(client, deadline)
      return { client, tool, close: async () => (await client.close().catch(() => {}), await stop(proc)) }
    } catch (error) {
      await client.close().catch(() => {})
      if (Date.now() > deadline) {
        await stop(proc)
        throw error
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
}

function spawnLogged(args: string[], env: Record<string, string>): { proc: ChildProcess; log: () => string } {
  const proc = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let log = ''
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4_000)
  }
  proc.stdout!.on('data', keep)
  proc.stderr!.on('data', keep)
  return { proc, log: () => log }
}

const oneMcpEntry = (): Absent | { entry: string } => {
  const dir = process.env.MYC_BENCH_1MCP
  if (!dir) return { absent: 'MYC_BENCH_1MCP not set' }
  const entry = path.join(dir, 'build', 'index.js')
  return existsSync(entry) ? { entry } : { absent: `no ${entry} (build 1MCP first)` }
}

const oneMcpConfig = (echo: PeerEnv['echo']) => {
  const config = configFile('1mcp', { mcpServers: { echo: { command: echo.command, args: echo.args } } })
  return ['--config', config, '--config-dir', path.dirname(config)]
}

/** 1MCP over stdio, `1mcp serve --transport stdio`. */
export async function oneMcpStdio(peer: PeerEnv): Promise<PeerSide> {
  const found = oneMcpEntry()
  if ('absent' in found) return found
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [found.entry, 'serve', '--transport', 'stdio', ...oneMcpConfig(peer.echo)],
      env: peer.env,
      stderr: 'ignore',
    }),
  )
  const tool = await echoToolOf(client, Date.now() + 60_000)
  return { client, tool, close: () => client.close() }
}

/** 1MCP over Streamable HTTP, `1mcp serve --port <p>`, at /mcp. */
export async function oneMcpHttp(peer: PeerEnv): Promise<PeerSide> {
  const found = oneMcpEntry()
  if ('absent' in found) return found
  const port = await freePort()
  const args = [found.entry, 'serve', '--host', '127.0.0.1', '--port', String(port), ...oneMcpConfig(peer.echo)]
  const { proc, log } = spawnLogged(args, peer.env)
  return httpPeer(proc, () => new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)), log)
}

/** mcp-hub over HTTP, `mcp-hub --port <p> --config <file>`: the 2024-11-05 HTTP+SSE transport (GET /mcp, POST /messages), the only one its version 4 serves. */
export async function mcpHubHttp(peer: PeerEnv): Promise<PeerSide> {
  const dir = process.env.MYC_BENCH_MCP_HUB
  if (!dir) return { absent: 'MYC_BENCH_MCP_HUB not set' }
  const entry = [path.join(dir, 'dist', 'cli.js'), path.join(dir, 'node_modules', 'mcp-hub', 'dist', 'cli.js')].find(
    (file) => existsSync(file),
  )
  if (!entry) return { absent: `no mcp-hub in ${dir} (npm install mcp-hub there)` }
  const config = configFile('mcp-hub', { mcpServers: { echo: { command: peer.echo.command, args: peer.echo.args } } })
  const port = await freePort()
  const { proc, log } = spawnLogged([entry, '--port', String(port), '--config', config], peer.env)
  return httpPeer(proc, () => new SSEClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)), log)
}

/** A peer side, or absent with the reason it could not be started. */
export async function startPeer(start: (peer: PeerEnv) => Promise<PeerSide>, peer: PeerEnv): Promise<PeerSide> {
  try {
    return await start(peer)
  } catch (error) {
    return { absent: `did not start: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300) }
  }
}
