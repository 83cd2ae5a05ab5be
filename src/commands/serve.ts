import path from 'node:path'
import { defineCommand } from 'citty'
import { commandIO, type CommandIO } from '../command-io.js'
import type { Logger } from '../logger.js'
import type { LoadedConfig } from '../config/load.js'
import type { PrespawnedChildren } from '../children/prespawn.js'
import type { PolicySources } from '../principal/policy-state.js'
import type { PolicyMode } from '../principal/policy-mode.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import type { ClientFaces } from '../http/era-route.js'
import { usageError } from '../errors.js'
import { STDIO_ERA_MODES, type StdioEraMode } from '../server/stdio-era-mode.js'
import { version } from '../version.js'
import { commonArgs, eraArgs, optionalValue, principalArgs, splitList, commandLogger } from './_shared.js'

// Only light modules above: serve loads its config and starts the children before the rest of myc is loaded (see run).

export default defineCommand({
  meta: {
    name: 'serve',
    description: 'Run the aggregator as an MCP server on stdio, or on Streamable HTTP with --http',
  },
  args: {
    ...commonArgs,
    ...principalArgs,
    http: optionalValue({
      type: 'string',
      description: 'Serve Streamable HTTP on [HOST:]PORT instead of stdio (no value, or an empty one: http.listen)',
      valueHint: '[host:]port',
    }),
    stdio: {
      type: 'boolean',
      description: 'With --http: also serve the client on stdio (as --role/--skills); myc stops when it leaves',
    },
    ...eraArgs,
  },
  async run({ args, data }) {
    const io = commandIO(data)
    const logger = commandLogger(io, { verbose: args.verbose })
    const overHttp = args.http !== undefined
    if (args.stdio && !overHttp)
      throw usageError('--stdio goes with --http (stdio alone is what myc serve does by default)')
    const era = (args.era ?? 'auto') as StdioEraMode
    if (!STDIO_ERA_MODES.includes(era))
      throw usageError(`--era must be one of ${STDIO_ERA_MODES.join(', ')} (got "${String(args.era)}")`)
    if (overHttp && !args.stdio && era !== 'auto')
      throw usageError(
        '--era pins the era of the stdio client; over HTTP every request is served in its own era (add --stdio to serve one on stdio too)',
      )
    // The children first: each one's own start-up (often the longest part) overlaps the loading of the rest of myc. Those not taken over by the runtime are stopped.
    const [{ loadConfig }, { PrespawnedChildren }, { hostForThisProcess }] = await Promise.all([
      import('../config/load.js'),
      import('../children/prespawn.js'),
      import('../runtime/host.js'),
    ])
    const configLoaded = await loadConfig({ configPath: args.config, cwd: io.cwd, env: io.env })
    // The flags against the config before any child starts: a usage error never follows a child's start-up.
    const sources = await checkBeforeChildren(args, configLoaded, overHttp, logger, io.env)
    const prespawned = PrespawnedChildren.start(configLoaded, hostForThisProcess(io.env))
    try {
      return await serveWith(args, { io, logger, era, overHttp, configLoaded, prespawned, sources })
    } finally {
      prespawned.stopAll()
    }
  },
})

interface ServeOptions {
  io: CommandIO
  logger: Logger
  era: StdioEraMode
  overHttp: boolean
  configLoaded: LoadedConfig
  prespawned: PrespawnedChildren
  /** The skills and roles, when checkBeforeChildren loaded them (the runtime takes them as they are). */
  sources: PolicySources | undefined
}

/**
 * What serve would refuse once its children had started, refused before:
 * `--role` or `--skills` in open mode; over HTTP, the settings serve checks
 * (tokens' variables, addresses); in policy mode, when a role is asked for
 * (`--role`, `--skills`, MYCELIUM_ROLE) or over HTTP (the tokens' roles),
 * the role and skills against the skills, loaded now and handed on, so they
 * are read once. Without any of those the skills are read later, while the
 * children start, as before.
 */
async function checkBeforeChildren(
  args: { role?: string; skills?: string; http?: string; stdio?: boolean },
  loaded: LoadedConfig,
  overHttp: boolean,
  logger: Logger,
  env: Record<string, string | undefined>,
): Promise<PolicySources | undefined> {
  const [{ isPolicyMode, checkViewRequest, loadSources }, { PolicyState }] = await Promise.all([
    import('../principal/policy-mode.js'),
    import('../principal/policy-state.js'),
  ])
  const principal = { role: args.role, skills: splitList(args.skills), env }
  const http = overHttp ? await import('../http/http-settings.js') : undefined
  const settings = http?.httpSettings(loaded, args.http, env)
  if (!isPolicyMode(loaded)) {
    checkViewRequest({ kind: 'open' }, loaded, principal)
    return undefined
  }
  const asked = principal.role !== undefined || (principal.skills?.length ?? 0) > 0 || env.MYCELIUM_ROLE
  if (!asked && !settings) return undefined
  const sources = await loadSources(loaded, logger)
  // The catalogue is empty before the children start: a skill strict loading would disable later still counts here.
  const mode = { kind: 'policy' as const, state: new PolicyState(sources, { toolNamesOf: () => undefined }) }
  if (settings) {
    const { checkPrincipals, launchPrincipal } = await import('../http/principals.js')
    const launch = launchPrincipal(args.role, principal.skills)
    checkPrincipals(mode, loaded, settings.tokens, launch, env, settings.jwt !== undefined)
  }
  // On stdio (alone, or beside HTTP with --stdio) the client is the launch's principal.
  if (!settings || args.stdio) checkViewRequest(mode, loaded, principal)
  return sources
}

/** The arguments of serve that its steps read. */
type ServeArgs = { config?: string; role?: string; skills?: string; http?: string; stdio?: boolean }

/** What serve has once its runtime is open: the config and mode it runs in, how a principal's view is made, the faces of the two eras. */
interface OpenedServe {
  runtime: Runtime
  loaded: LoadedConfig
  mode: PolicyMode
  /** A role from the command line is a person's choice (refused in open mode); an HTTP credential's comes from the config. */
  viewFor(principal: { role?: string; skills?: readonly string[] }, roleFrom?: string): PrincipalView
  faces: ClientFaces
  serveStdio: (typeof import('../server/serve-stdio.js'))['serveStdio']
}

/** The rest of serve, once its children are starting: the runtime, the view, and the stdio or HTTP face. */
async function serveWith(args: ServeArgs, options: ServeOptions): Promise<number> {
  const { io, logger, overHttp } = options
  const opened = await openServeRuntime(args, options)
  // A person typed `myc serve` at a terminal: what is on stdin is a person, and the protocol is for a client.
  if ((!overHttp || args.stdio) && io.stdin.isTTY === true) logger.info(terminalHint(opened.loaded.file))
  const serve = overHttp ? await httpServe(args, options, opened) : stdioServe(args, options, opened)
  const stopWatching = await watchWhileServing(options, opened)
  try {
    return await serve()
  } finally {
    stopWatching()
  }
}

/** The runtime over the children already starting, the sandbox and code mode's runners, and the faces of the two eras. */
async function openServeRuntime(args: ServeArgs, options: ServeOptions): Promise<OpenedServe> {
  const { io, logger, overHttp } = options
  const [
    { openRuntime },
    { CLIENT_INITIALIZE_WAIT_MS },
    { serveStdio },
    { createView, codeModeWanted },
    { childSessions },
    { clientFaces },
  ] = await Promise.all([
    import('../runtime/open-runtime.js'),
    import('../runtime/runtime.js'),
    import('../server/serve-stdio.js'),
    import('../principal/policy-mode.js'),
    import('../eras/child-sessions.js'),
    import('../eras/client-faces.js'),
  ])
  // Over stdio one client's capabilities are what children are offered (they wait for it); over HTTP, prepareHttp decides.
  // Prometheus metrics served (http.metrics, and a token or address to read them): its operation durations need each request timed.
  const { http } = options.configLoaded.config
  const measureOperations =
    overHttp && http.metrics && (http.metricsToken !== undefined || http.metricsListen !== undefined)
  // On stdio a person is behind the client: a login gone bad is asked of them again (`myc: authorize:` on stderr); over HTTP people log in through myc.
  const reauthorize = overHttp
    ? undefined
    : (await import('../oauth/reauthorize.js')).stderrReauthorize({ stderr: io.stderr })
  const { runtime, loaded, mode } = await openRuntime({
    childSessions,
    configPath: args.config,
    cwd: io.cwd,
    env: io.env,
    logger,
    version,
    loaded: options.configLoaded,
    prespawned: options.prespawned,
    ...(options.sources ? { sources: options.sources } : {}),
    measureOperations,
    ...(reauthorize ? { reauthorize } : {}),
    ...(overHttp ? {} : { waitForClientMs: CLIENT_INITIALIZE_WAIT_MS }),
  })
  const runner =
    mode.kind === 'policy'
      ? await (await import('../principal/builtin-exec.js')).createSandboxRunner(loaded)
      : undefined
  // Code mode's runner, once for every session (off, with a warning, where it cannot run).
  const codeRunner = codeModeWanted(mode, loaded)
    ? await (await import('../code/code-mode.js')).codeRunnerFor(loaded, logger)
    : undefined
  const viewFor: OpenedServe['viewFor'] = (principal, roleFrom = 'http.tokens or http.jwt') =>
    createView(mode, loaded, {
      role: principal.role,
      roleFrom,
      skills: principal.skills,
      env: io.env,
      catalogue: runtime.catalogue,
      logger,
      transport: overHttp ? 'http' : 'stdio',
      ...(runner ? { runner } : {}),
      ...(codeRunner ? { codeRunner } : {}),
    })
  // The faces of the two eras, for every client of this runtime (stdio and HTTP alike); serving closes them.
  return { runtime, loaded, mode, viewFor, faces: clientFaces(), serveStdio }
}

/** Serving over HTTP (and, with --stdio, the launching client beside it), its settings checked now. */
async function httpServe(args: ServeArgs, options: ServeOptions, opened: OpenedServe): Promise<() => Promise<number>> {
  const { io, logger, era } = options
  const { runtime, loaded, mode, viewFor, faces } = opened
  const skills = splitList(args.skills)
  // Over HTTP too, a role asked for on the command line where there are no roles is refused, not ignored.
  if (mode.kind === 'open' && (args.role !== undefined || (skills?.length ?? 0) > 0))
    viewFor({ role: args.role, skills }, '--role')
  const [{ prepareHttp }, { serveHttp }] = await Promise.all([
    import('../http/http-settings.js'),
    import('../http/serve-http.js'),
  ])
  const prepared = prepareHttp({
    runtime,
    loaded,
    mode,
    flag: args.http,
    role: args.role,
    skills,
    env: io.env,
    notice: (message) => logger.warn(message),
  })
  const stdio = args.stdio ? { view: viewFor({ role: args.role, skills }, '--role'), era } : undefined
  return () =>
    serveHttp({
      runtime,
      faces,
      loaded,
      logger,
      ...prepared,
      viewFor: (principal) => viewFor(principal),
      policy: mode.kind === 'policy',
      signals: io.signals,
      ...(stdio ? { stdio: { ...stdio, stdin: io.stdin, stdout: io.stdout } } : {}),
    })
}

/** Serving the one client on stdio, as the launch's principal. */
function stdioServe(args: ServeArgs, options: ServeOptions, opened: OpenedServe): () => Promise<number> {
  const { io, logger, era } = options
  const { runtime, loaded, mode, viewFor, faces } = opened
  const view = viewFor({ role: args.role, skills: splitList(args.skills) }, '--role')
  if (mode.kind === 'policy') logger.info(`policy mode: role ${(view as { role?: string }).role}`)
  else
    logger.info(
      `open mode (no skills in ${loaded.file ?? 'this folder'}): the client sees every tool of every server; add skills to serve roles`,
    )
  return () =>
    opened.serveStdio({ runtime, faces, view, logger, era, stdin: io.stdin, stdout: io.stdout, signals: io.signals })
}

/** What watches while myc serves (the skills, the config, on a terminal the children starting); returns what stops them. */
async function watchWhileServing(options: ServeOptions, opened: OpenedServe): Promise<() => void> {
  const { io, logger } = options
  const { runtime, mode } = opened
  const stopWatchingSkills =
    mode.kind === 'policy'
      ? (await import('../principal/skill-watcher.js')).watchSkills(() => runtime.loaded, mode.state, logger)
      : undefined
  const liveConfig = (await import('../runtime/live-config.js')).watchConfig({
    runtime,
    mode,
    logger,
    env: io.env,
  })
  // On a terminal (a person ran serve by hand), a line per child while they start.
  const stopProgress = (await import('../runtime/start-progress.js')).showStartProgress(runtime, {
    stream: io.stderr,
    env: io.env,
    logger,
  })
  return () => {
    stopProgress()
    stopWatchingSkills?.()
    liveConfig.stop()
  }
}

/**
 * What `myc serve` says once on a terminal: it speaks MCP on stdin, for an
 * MCP client to start it, and the entry that client needs (this very myc:
 * the bundle under node, or the executable), or how to serve HTTP instead.
 */
function terminalHint(configFile: string | undefined, argv = process.argv, execPath = process.execPath): string {
  const script = argv[1] !== undefined && /\.c?js$/.test(argv[1]) ? path.resolve(argv[1]) : undefined
  const [command, ...first] = script ? [execPath, script] : [execPath]
  const entry = {
    command,
    args: [...first, '--config', configFile ?? '/absolute/path/mycelium.config.json'],
  }
  return `this is MCP on stdin and stdout, for an MCP client that starts myc, not for typing (Ctrl-C stops it). To connect a client, give it this entry under "mcpServers": "mycelium": ${JSON.stringify(entry)}; for clients that connect to a URL: myc serve --http`
}
