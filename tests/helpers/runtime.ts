import { InMemoryTransport, Client } from '@modelcontextprotocol/client'
import type { LoadedConfig } from '../../src/config/load.js'
import { parseConfig } from '../../src/config/load.js'
import { createLogger } from '../../src/logger.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { Session } from '../../src/server/session.js'
import { openView, type PrincipalView } from '../../src/server/view.js'
import { fixtureServer, repoRoot } from './fixtures.js'

/** A stdio server entry that runs a fixture server with this Node.js. */
export function fixtureEntry(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [fixtureServer(name)], ...extra }
}

/** Builds a LoadedConfig from a raw config object through the real parser. */
export function loadedConfig(raw: Record<string, unknown>, env: Record<string, string | undefined> = process.env): LoadedConfig {
  const file = `${repoRoot}/tests/virtual.mycelium.config.json`
  const { config, secrets } = parseConfig(raw, { file, env })
  return { file, dir: repoRoot, config, secrets }
}

/** A runtime over real child processes (started), plus a cleanup function. */
export async function startRuntime(raw: Record<string, unknown>, logger = createLogger({ quiet: !process.env.MYC_TEST_VERBOSE, verbose: Boolean(process.env.MYC_TEST_VERBOSE) })): Promise<Runtime> {
  const runtime = new Runtime({ loaded: loadedConfig(raw), logger, version: '0.0.0-test', host: hostForThisProcess() })
  await runtime.start()
  return runtime
}

/** An SDK client connected to a new session of the runtime over an in-memory pair. */
export async function connectClient(runtime: Runtime, options: { view?: PrincipalView; capabilities?: Record<string, unknown>; setup?: (client: Client) => void } = {}): Promise<{ client: Client; session: Session }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const session = new Session({ runtime, view: options.view ?? openView() })
  await session.connect(serverSide)
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities: options.capabilities ?? {} })
  options.setup?.(client)
  await client.connect(clientSide)
  return { client, session }
}

/** A logger that records every line (with its tag) instead of printing. */
export function captureLogger(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = []
  const logger = createLogger({ verbose: true })
  ;(logger as unknown as { setReporters: (r: unknown[]) => void }).setReporters([
    { log: (obj: { tag?: string; args: unknown[] }) => lines.push(`${obj.tag ? `[${obj.tag}] ` : ''}${obj.args.map(String).join(' ')}`) },
  ])
  return { logger, lines }
}

/** Polls until `check` returns true, or fails after `ms`. */
export async function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

