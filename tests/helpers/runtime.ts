import { InMemoryTransport, Client, type ClientCapabilities, type JSONRPCMessage } from '@modelcontextprotocol/client'
import type { LoadedConfig } from '../../src/config/load.js'
import { parseConfig } from '../../src/config/load.js'
import { createLogger } from '../../src/logger.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { ClientConnection } from '../../src/eras/legacy/client-connection.js'
import { openView, type PrincipalView } from '../../src/principal/view.js'
import { fixtureServer, repoRoot } from './fixtures.js'
import { childSessions } from '../../src/eras/child-sessions.js'

/** Polls until a condition holds (tests/helpers/wait-for.ts); kept here for the tests that import it from the runtime helpers. */
export { waitFor } from './wait-for.js'

/** A stdio server entry that runs a fixture server with this Node.js. */
export function fixtureEntry(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [fixtureServer(name)], ...extra }
}

/** Builds a LoadedConfig from a raw config object through the real parser. */
export function loadedConfig(
  raw: Record<string, unknown>,
  env: Record<string, string | undefined> = process.env,
): LoadedConfig {
  const file = `${repoRoot}/tests/virtual.mycelium.config.json`
  const { config, secrets } = parseConfig(raw, { file, env })
  return { file, dir: repoRoot, config, secrets }
}

/** A runtime over real child processes (started), plus a cleanup function. */
export async function startRuntime(
  raw: Record<string, unknown>,
  logger = createLogger({ quiet: !process.env.MYC_TEST_VERBOSE, verbose: Boolean(process.env.MYC_TEST_VERBOSE) }),
  options: { clientCapabilities?: ClientCapabilities } = {},
): Promise<Runtime> {
  const runtime = new Runtime({
    childSessions,
    loaded: loadedConfig(raw),
    logger,
    version: '0.0.0-test',
    host: hostForThisProcess(),
  })
  // As if a client with these capabilities had connected first (children are offered them).
  if (options.clientCapabilities) runtime.offerClientCapabilities(options.clientCapabilities)
  await runtime.start()
  return runtime
}

/** An SDK client connected to a new client connection of the runtime over an in-memory pair. */
export async function connectClient(
  runtime: Runtime,
  options: {
    view?: PrincipalView
    capabilities?: Record<string, unknown>
    setup?: (client: Client) => void
    /** The connection's person (an HTTP token's `name`): their instances of scoped servers serve it. */
    owner?: string
    /** Its 2025 HTTP session's id: its instances of `scope: "session"` servers serve it. */
    sessionId?: string
  } = {},
): Promise<{ client: Client; connection: ClientConnection }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const connection = new ClientConnection({
    runtime,
    view: options.view ?? openView(),
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
  })
  await connection.connect(serverSide)
  const client = new Client({ name: 'test-client', version: '1.0.0' }, { capabilities: options.capabilities ?? {} })
  options.setup?.(client)
  await client.connect(clientSide)
  return { client, connection }
}

/** A logger that records every line (with its tag) instead of printing. */
export function captureLogger(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = []
  const logger = createLogger({ verbose: true })
  ;(logger as unknown as { setReporters: (r: unknown[]) => void }).setReporters([
    {
      log: (obj: { tag?: string; args: unknown[] }) =>
        lines.push(`${obj.tag ? `[${obj.tag}] ` : ''}${obj.args.map(String).join(' ')}`),
    },
  ])
  return { logger, lines }
}

/**
 * A started runtime in policy mode (or open mode) over a loaded config, the
 * way `myc serve` builds it, for principal tests: strict loading is re-checked
 * on catalogue changes, and `view(role, …)` makes a principal's view.
 */
export class PolicyHarness {
  runtime!: Runtime
  loaded!: import('../../src/config/load.js').LoadedConfig
  mode!: import('../../src/principal/policy-mode.js').PolicyMode
  readonly logger = createLogger({ quiet: true })

  constructor(private readonly load: () => Promise<import('../../src/config/load.js').LoadedConfig>) {}

  async start(): Promise<void> {
    const { loadPolicyMode } = await import('../../src/principal/policy-mode.js')
    this.loaded = await this.load()
    this.runtime = new Runtime({
      childSessions,
      loaded: this.loaded,
      logger: this.logger,
      version: 'test',
      host: hostForThisProcess(),
    })
    this.mode = await loadPolicyMode(this.loaded, this.runtime.catalogue, this.logger)
    const mode = this.mode
    if (mode.kind === 'policy') this.runtime.onCatalogueChange(() => mode.state.invalidate())
    await this.runtime.start()
  }

  async close(): Promise<void> {
    await this.runtime?.close()
  }

  /** A principal's view, as `myc serve --role … --skills …` would make it. */
  async view(
    role: string | undefined,
    options: {
      skills?: string[]
      env?: Record<string, string>
      runner?: import('../../src/principal/builtin-exec.js').BuiltinRunner
      codeRunner?: import('../../src/code/code-runner.js').CodeRunner
      /** The agent's view (`agent.codeMode`) rather than a session's (`session.codeMode`). */
      face?: import('../../src/principal/policy-mode.js').CodeModeFace
    } = {},
  ): Promise<PrincipalView> {
    const { createView } = await import('../../src/principal/policy-mode.js')
    return createView(this.mode, this.loaded, {
      ...(role !== undefined ? { role } : {}),
      ...(options.skills ? { skills: options.skills } : {}),
      env: options.env ?? {},
      catalogue: this.runtime.catalogue,
      logger: this.logger,
      ...(options.runner ? { runner: options.runner } : {}),
      ...(options.codeRunner ? { codeRunner: options.codeRunner } : {}),
      ...(options.face ? { face: options.face } : {}),
    })
  }
}

/**
 * What a client gets for one URI request, with the URI itself replaced by
 * <URI>: "ok", or the error message. Two URIs that get the same string got
 * the same answer but for the name the caller sent.
 */
export async function uriAnswer(client: Client, method: string, uri: string): Promise<string> {
  const { passthrough } = await import('../../src/protocol/passthrough.js')
  try {
    await client.request({ method, params: { uri } }, passthrough)
    return 'ok'
  } catch (error) {
    return String((error as Error).message)
      .split(uri)
      .join('<URI>')
  }
}

/** A raw JSON-RPC client of one connection: every message as the exact text that crossed. */
export class RawConnection {
  private next = 0
  private readonly waiting = new Map<number, (text: string) => void>()
  readonly all: string[] = []
  constructor(private readonly transport: InMemoryTransport) {
    transport.onmessage = (message: JSONRPCMessage) => {
      const text = JSON.stringify(message)
      this.all.push(text)
      const id = (message as { id?: number }).id
      if (typeof id === 'number') this.waiting.get(id)?.(text)
    }
  }
  static async open(runtime: Runtime, view: PrincipalView = openView()): Promise<RawConnection> {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await new ClientConnection({ runtime, view }).connect(serverSide)
    const raw = new RawConnection(clientSide)
    await raw.transport.start()
    await raw.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    })
    await raw.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
    return raw
  }
  /** The answer's text, its id made 0 (two answers to two requests compare as text). */
  request(method: string, params: Record<string, unknown>): Promise<string> {
    const id = ++this.next
    return new Promise<string>((resolve) => {
      this.waiting.set(id, resolve)
      void this.transport.send({ jsonrpc: '2.0', id, method, params })
    }).then((text) => text.replace(`"id":${id}`, '"id":0'))
  }
  async names(method: 'tools/list' | 'prompts/list'): Promise<string[]> {
    const key = method === 'tools/list' ? 'tools' : 'prompts'
    const answer = JSON.parse(await this.request(method, {})) as { result: Record<string, Array<{ name: string }>> }
    return answer.result[key]!.map((t) => t.name)
  }
  /** A tools/call's answer with the name the caller sent replaced, so a withheld tool's and a nonexistent one's compare. */
  async callText(name: string, args: Record<string, unknown> = {}): Promise<string> {
    return (await this.request('tools/call', { name, arguments: args })).split(name).join('<NAME>')
  }
  notifications(method: string): number {
    return this.all.filter((t) => t.includes(`"method":"${method}"`)).length
  }
}
