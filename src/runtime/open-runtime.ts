import { loadConfig, type LoadedConfig } from '../config/load.js'
import type { Logger } from '../logger.js'
import { loadPolicyMode, openAuditSink, type PolicyMode } from '../principal/policy-mode.js'
import type { PolicySources } from '../principal/policy-state.js'
import { lockPathOf, readLockFile } from '../pinning/lock-file.js'
import type { PrespawnedChildren } from '../children/prespawn.js'
import type { ChildSessions } from '../children/child-session.js'
import { hostForThisProcess } from './host.js'
import { Runtime } from './runtime.js'
import { openTracing } from '../telemetry/open-tracing.js'
import type { ChildReading } from '../telemetry/tracing.js'
import type { Reauthorize } from '../oauth/reauthorize.js'

export interface OpenRuntimeOptions {
  /** The session of each era a child may speak (src/eras/: childSessions). */
  childSessions: ChildSessions
  configPath?: string
  cwd?: string
  env?: Record<string, string | undefined>
  logger: Logger
  version: string
  /** A client will connect (serve): children wait this long at most for its capabilities. */
  waitForClientMs?: number
  /** The config, loaded already (serve loads it first, to start the children early). */
  loaded?: LoadedConfig
  /** Children started already from `loaded` (children/prespawn.ts). */
  prespawned?: PrespawnedChildren
  /** A one-shot inspection command: quiet children, no restarts (children/supervisor.ts). */
  oneShot?: { failuresShown: boolean }
  /** Time each MCP request even with OpenTelemetry off (Prometheus's operation durations, `myc serve --http`). */
  measureOperations?: boolean
  /** A person is there to authorize an HTTP child again (oauth/reauthorize.ts). */
  reauthorize?: Reauthorize
  /** Withhold nothing and read no lock (`myc pin` judges what the children offer itself). */
  ungated?: boolean
  /** The command reports what is withheld itself: no stderr line for each. */
  withheldShown?: boolean
  /** The skills and roles, loaded already from `loaded` (serve, which checks its flags against them first). */
  sources?: PolicySources
}

/**
 * Loads the config and the skills, and builds (but does not start) the
 * runtime. In policy mode strict loading is re-checked on every catalogue
 * change. Throws MycError on a bad config.
 */
export async function openRuntime(
  options: OpenRuntimeOptions,
): Promise<{ runtime: Runtime; loaded: LoadedConfig; mode: PolicyMode }> {
  const loaded =
    options.loaded ??
    (await loadConfig({
      configPath: options.configPath,
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
    }))
  // Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or the config) names an endpoint: then OpenTelemetry is loaded (traces, metrics), not before.
  const tracing = await openTracing({
    env: options.env ?? process.env,
    config: loaded.config.telemetry,
    version: options.version,
    warn: (message) => options.logger.warn(message),
    ...(options.measureOperations ? { measureOperations: true } : {}),
  })
  // The lock beside the config file (a bad one is a config error: serving unpinned definitions is not the fallback).
  const lock = options.ungated || !loaded.file ? undefined : await readLockFile(lockPathOf(loaded.dir))
  const audit = openAuditSink(loaded, options.logger)
  const runtime = new Runtime({
    loaded,
    logger: options.logger,
    version: options.version,
    host: hostForThisProcess(options.env ?? process.env),
    childSessions: options.childSessions,
    ...(options.waitForClientMs !== undefined ? { waitForClientMs: options.waitForClientMs } : {}),
    ...(options.prespawned ? { prespawned: options.prespawned } : {}),
    ...(options.oneShot ? { oneShot: options.oneShot } : {}),
    ...(tracing ? { tracing } : {}),
    ...(options.reauthorize ? { reauthorize: options.reauthorize } : {}),
    ...(lock ? { lock } : {}),
    ...(options.ungated ? { ungated: true } : {}),
    ...(options.withheldShown ? { withheldShown: true } : {}),
    audit,
  })
  // Metrics on: the children's state and restarts are read at each export.
  tracing?.observe({ children: () => childReadings(runtime) })
  const mode = await loadPolicyMode(loaded, runtime.catalogue, options.logger, audit, options.sources)
  if (mode.kind === 'policy') runtime.onCatalogueChange(() => mode.state.invalidate())
  return { runtime, loaded, mode }
}

/** Each server's state for the metrics: the configured ones, and any a reload removed that had restarted. */
function childReadings(runtime: Runtime): ChildReading[] {
  const { children, restarts } = runtime.supervisor
  return [...new Set([...children.keys(), ...restarts.keys()])].map((server) => ({
    server,
    running: children.get(server)?.state === 'RUNNING',
    restarts: restarts.get(server) ?? 0,
  }))
}
