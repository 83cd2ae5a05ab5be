import { InMemoryTransport, Client, type ClientCapabilities } from '@modelcontextprotocol/client'
import type { LoadedConfig } from '../../src/config/load.js'
import { parseConfig } from '../../src/config/load.js'
import { createLogger } from '../../src/logger.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { ClientConnection } from '../../src/server/client-connection.js'
import { openView, type PrincipalView } from '../../src/principal/view.js'
import { fixtureServer, repoRoot } from './fixtures.js'

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
  const runtime = new Runtime({ loaded: loadedConfig(raw), logger, version: '0.0.0-test', host: hostForThisProcess() })
  // As if a client with these capabilities had connected first (children are offered them).
  if (options.clientCapabilities) runtime.offerClientCapabilities(options.clientCapabilities)
  await runtime.start()
  return runtime
}

/** An SDK client connected to a new client connection of the runtime over an in-memory pair. */
export async function connectClient(
  runtime: Runtime,
  options: { view?: PrincipalView; capabilities?: Record<string, unknown>; setup?: (client: Client) => void } = {},
): Promise<{ client: Client; connection: ClientConnection }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const connection = new ClientConnection({ runtime, view: options.view ?? openView() })
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
