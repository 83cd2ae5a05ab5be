import { McpServer, ProtocolError, type Server, type ServerContext } from '@modelcontextprotocol/server'
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  type ClientCapabilities,
  type LoggingLevel,
} from '@modelcontextprotocol/client'
import { hasSkillsExtension } from '../../children/child.js'
import type { RelayOutcome } from '../../protocol/request-relay.js'
import { skillScope, type CredentialView } from './credential-view.js'
import { callVisibleTool, listedTools } from '../../runtime/principal-tools.js'
import { MODERN_PROTOCOL_VERSION, RpcCode } from '../../protocol/facts.js'
import type { Runtime } from '../../runtime/runtime.js'
import { decodeCursor, paginate } from '../../server/pagination.js'
import type { CallTarget, ParkedCall, ParkedStep, RoundSink } from './parked-calls.js'
import { isParkedState, type ParkedCalls } from './parked-registry.js'
import {
  completeVisible,
  getVisiblePrompt,
  instructionsFor,
  readVisibleResource,
  skillSourcesFor,
  tracedList,
  visiblePrompts,
  visibleResources,
  visibleTemplates,
  type PrincipalForward,
} from '../../server/principal-requests.js'
import { registerSkillHandlers } from '../../server/skills-handlers.js'
import { serverCapabilities } from '../../server/server-capabilities.js'
import { missingTasksExtension, registerTaskHandlers, taskCaller, tasksExtensionCapability } from './task-routing.js'
import type { TaskRegistry } from './task-registry.js'
import { HOSTED_TASK_TTL_MS, needsTaskOptIn, startAsTask, taskHosting, type TaskHosting } from './hosted-tasks.js'

/** How long a 2026-era client may keep a list (`ttlMs`): one that does not listen (subscriptions/listen) sees a child's new tools within this. */
const MODERN_LIST_TTL_MS = 30_000

export interface StatelessServerOptions {
  runtime: Runtime
  /** The credential's view: what it sees never changes by what it calls. */
  view: CredentialView
  /** Whether a skill the credential does not grant is an OAuth step-up (403 insufficient_scope): only where clients present credentials. */
  stepUp: boolean
  /** `ttlMs` of the lists and of server/discover. */
  listTtlMs?: number
  /** Entries per page of the list answers. */
  pageSize?: number
  /** The calls of this face waiting for their clients' input (a 2025 child asked during a call): one registry per route or stdio connection, outliving the per-request servers. */
  parked: ParkedCalls
  /** The runtime's tasks (task-registry.ts): one registry per runtime, handed to every 2026 face. */
  tasks: TaskRegistry
  /** Whose own OAuth logins its calls use (an HTTP principal's name: runtime/principal-tools.ts). */
  owner?: string
  /** What each inner call of a run_code run takes from the credential's budget (runtime/call-context.ts). */
  chargeInnerCall?: () => Promise<string | undefined>
}

/** A relayed answer as an SDK handler returns it: the child's result untouched, or its error thrown with code and data. */
function answer(outcome: RelayOutcome | undefined): Record<string, unknown> {
  if (!outcome) throw new ProtocolError(RpcCode.requestCancelled, 'Request cancelled')
  if (outcome.ok) return outcome.result
  const error = outcome.error as { code: number; message: string; data?: unknown }
  throw new ProtocolError(error.code, error.message, error.data)
}

/**
 * The server that answers one 2026-07-28 request for one credential's view
 * (`createMcpHandler` asks for a fresh one per request): `server/discover`,
 * the four lists with `cacheScope: "private"` and a `ttlMs`, and tools/call,
 * prompts/get, resources/read and completion/complete forwarded through the
 * same functions as a 2025 session's (hidden things answer as ones that do
 * not exist). The SDK lifts the envelope keys off `_meta` before a handler
 * sees the params, so a 2025 child gets them in the 2025 shape (trace context
 * and progress token kept), and a 2026 child myc's own envelope (see
 * ChildConnection.forward). An McpServer, not a bare Server, for one thing only: the SDK
 * asks a registered tool's `scopeChallenge` before it serves a call, and
 * answers `403 insufficient_scope` itself. So `activate_skill` is registered
 * with one (a skill the credential does not grant names its scope); every
 * handler, tools/list and tools/call included, is myc's.
 */
export async function statelessServer(options: StatelessServerOptions): Promise<McpServer> {
  const { runtime, view, tasks } = options
  const pageSize = options.pageSize ?? 1_000
  await runtime.whenStarted()
  const mcp = newMcpServer(options)
  registerStepUp(mcp, options)
  const server = mcp.server
  server.registerCapabilities(serverCapabilities(runtime, view, tasksExtensionCapability(runtime, view)))
  const caps = server.getCapabilities()
  const requests = new StatelessRequests(options, pageSize)
  registerTools(server, requests, options)
  if (caps.prompts) registerPrompts(server, requests, options)
  if (caps.resources) registerResources(server, requests, options)
  if (caps.completions) {
    server.setRequestHandler(
      'completion/complete',
      (request, ctx) =>
        requests.forwarded(
          ctx,
          { method: 'completion/complete', name: JSON.stringify(request.params.ref ?? null) },
          (forward) => completeVisible(runtime, view, request.params as Record<string, unknown>, forward),
        ) as never,
    )
  }
  if (hasSkillsExtension(caps)) registerSkillHandlers(server, skillSourcesFor(runtime, view), pageSize)
  registerTaskHandlers(server, runtime, view, tasks)
  return mcp
}

/** The McpServer with the view's instructions, the lists' cache hints, and myc's requestState verified. */
function newMcpServer(options: StatelessServerOptions): McpServer {
  const { runtime, view, parked } = options
  const ttlMs = options.listTtlMs ?? MODERN_LIST_TTL_MS
  const hint = { ttlMs, cacheScope: 'private' as const }
  const instructions = instructionsFor(runtime, view)
  return new McpServer(
    { name: 'mycelium', version: runtime.deps.version },
    {
      ...(instructions ? { instructions } : {}),
      cacheHints: {
        'tools/list': hint,
        'prompts/list': hint,
        'resources/list': hint,
        'resources/templates/list': hint,
        'server/discover': hint,
      },
      // myc's own requestState (a parked call) is verified and decoded; a child's passes through as the string it is.
      requestState: { verify: parked.verify },
    },
  )
}

/** `activate_skill` registered for its scope challenge alone (the OAuth step-up), where clients present credentials. */
function registerStepUp(mcp: McpServer, options: StatelessServerOptions): void {
  const { view, stepUp } = options
  const activate = view.activateTool()
  // The SDK warns on every registration of a name outside its tool-name rule (a custom namespace.separator): then no challenge, and the call answers how to get the skill.
  if (!stepUp || !activate || !/^[A-Za-z0-9._-]{1,128}$/.test(activate.name)) return
  mcp.registerTool(
    activate.name,
    {
      description: activate.description ?? '',
      scopeChallenge: ({ request }) => {
        const skill = view.skillToStepUp(request.params?.name, request.params?.arguments)
        if (skill === undefined || !/^[\u0021\u0023-\u005B\u005D-\u007E]+$/.test(skillScope(skill))) return undefined
        return {
          scopes: [skillScope(skill)],
          errorDescription: `Skill ${skill} needs the scope ${skillScope(skill)}`,
        }
      },
    },
    // Never called: tools/call below is myc's; this registration carries the scope challenge only.
    () => ({ content: [], isError: true }),
  )
}

/** tools/list and tools/call. */
function registerTools(server: Server, requests: StatelessRequests, options: StatelessServerOptions): void {
  const { runtime, view } = options
  server.setRequestHandler('tools/list', (request) =>
    requests.list('tools/list', request.params, 'tools', 'tools', () => listedTools(runtime, view)),
  )
  server.setRequestHandler(
    'tools/call',
    (request, ctx) =>
      requests.forwarded(ctx, { method: 'tools/call', name: String(request.params.name) }, async (forward, retry) => {
        const called = await callVisibleTool(
          runtime,
          view,
          { ...request.params, ...retry } as Record<string, unknown>,
          {
            ...forward,
            builtin: () => ({ signal: forward.cancellation.signal }),
            ...(options.chargeInnerCall ? { chargeInnerCall: options.chargeInnerCall } : {}),
          },
        )
        return called?.outcome
      }) as never,
  )
}

/** prompts/list and prompts/get. */
function registerPrompts(server: Server, requests: StatelessRequests, options: StatelessServerOptions): void {
  const { runtime, view } = options
  server.setRequestHandler('prompts/list', (request) =>
    requests.list('prompts/list', request.params, 'prompts', 'prompts', () => visiblePrompts(runtime, view)),
  )
  server.setRequestHandler(
    'prompts/get',
    (request, ctx) =>
      requests.forwarded(ctx, { method: 'prompts/get', name: String(request.params.name) }, (forward, retry) =>
        getVisiblePrompt(runtime, view, { ...request.params, ...retry }, forward),
      ) as never,
  )
}

/** resources/list, resources/templates/list (no server started for it) and resources/read. */
function registerResources(server: Server, requests: StatelessRequests, options: StatelessServerOptions): void {
  const { runtime, view } = options
  server.setRequestHandler('resources/list', (request) =>
    requests.list('resources/list', request.params, 'resources', 'resources', () => visibleResources(runtime, view)),
  )
  server.setRequestHandler('resources/templates/list', (request) =>
    requests.list(
      'resources/templates/list',
      request.params,
      'templates',
      'resourceTemplates',
      () => visibleTemplates(runtime, view),
      { startLazy: false },
    ),
  )
  server.setRequestHandler(
    'resources/read',
    (request, ctx) =>
      requests.forwarded(ctx, { method: 'resources/read', name: String(request.params.uri) }, (forward, retry) =>
        readVisibleResource(runtime, view, { ...request.params, ...retry }, forward),
      ) as never,
  )
}

/** What a forwarded request runs: the principal's relay, given the forward context and the retry's own fields. */
type ForwardRun = (forward: PrincipalForward, retry: Record<string, unknown>) => Promise<RelayOutcome | undefined>

/** What the request's envelope says that a forwarded call needs. */
interface CallEnvelope {
  logLevel: LoggingLevel | undefined
  clientCapabilities: ClientCapabilities | undefined
  /** The request's requestState: myc's own (a parked call's), or a child's string. */
  requestState: unknown
}

/** The handlers' shared steps for one credential's view: a list answered a page at a time, and a forwarded request. */
class StatelessRequests {
  private readonly reaches: (server: string) => boolean

  constructor(
    private readonly options: StatelessServerOptions,
    private readonly pageSize: number,
  ) {
    this.reaches = (s: string) => options.view.serverVisible(s)
  }

  /**
   * A list answered from the catalogue, a page at a time, as a SERVER span of
   * this face's revision when tracing; the lazy servers the view reaches are
   * started first (not for resource templates).
   */
  list<T>(
    method: string,
    params: Record<string, unknown> | undefined,
    kind: string,
    key: string,
    items: () => readonly T[],
    { startLazy = true } = {},
  ): never {
    const { runtime, view } = this.options
    const page = () => {
      const p = paginate(items(), decodeCursor(params?.cursor, kind), this.pageSize, kind)
      return { [key]: p.items, ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) }
    }
    const answer = startLazy
      ? async () => {
          await runtime.startLazy(this.reaches)
          return page()
        }
      : page
    return tracedList(runtime, view, method, params, answer, { protocolVersion: MODERN_PROTOCOL_VERSION }) as never
  }

  /**
   * Runs a forwarded request as a call the runtime knows for all its rounds
   * (a ParkedCall: a child's log message or question finds it). A modern
   * child hears the request's log level and the client's capabilities in
   * myc's envelope, and its `input_required` answer comes back as it is:
   * the client's retry brings `inputResponses` and `requestState`, which the
   * SDK lifts off the params, so they are put back for the child. A 2025
   * child's questions park the call (parked-calls.ts): the client gets
   * `input_required` from myc, and its retry, carrying myc's requestState,
   * resumes the call here instead of starting another.
   */
  async forwarded(ctx: ServerContext, target: CallTarget, run: ForwardRun): Promise<Record<string, unknown>> {
    const { view, parked, tasks } = this.options
    const { call, host } = this.openCall(ctx, target, run)
    const sink = roundSink(ctx)
    // A task opt-in to a 2025 child's tool: what does not answer at once, or the child's own task, becomes a task myc holds (hosted-tasks.ts).
    const task = host
      ? await startAsTask(tasks.hosted, host, call, ctx, sink, (t) => parked.open(view, t, ctx))
      : undefined
    if (task) return task
    let step: ParkedStep
    try {
      step = await call.next(ctx.mcpReq.signal, sink)
    } catch {
      // The client gave up on the request: the child's call goes with it.
      call.cancellation.cancel('cancelled by the client')
      throw new ProtocolError(RpcCode.requestCancelled, 'Request cancelled')
    }
    if (step.kind === 'done') return answer(call.explain(step.outcome))
    return {
      resultType: 'input_required',
      inputRequests: step.inputRequests,
      requestState: await parked.mint(call, ctx),
    }
  }

  /** The call this request is: a parked one resumed with the retry's answers, or a new one started (held as a task where it opted in). */
  private openCall(
    ctx: ServerContext,
    target: CallTarget,
    run: ForwardRun,
  ): { call: ParkedCall; host: TaskHosting | undefined } {
    const { runtime, view, parked } = this.options
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined
    const sent: CallEnvelope = {
      logLevel: envelope?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined,
      clientCapabilities: envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined,
      requestState: ctx.mcpReq.requestState<unknown>(),
    }
    if (isParkedState(sent.requestState)) {
      const call = parked.resume(sent.requestState, target, ctx)
      call.clientCapabilities = sent.clientCapabilities
      // The round that has the answers may end as a task (a multi-round call escalating to one): held the same way as a first round's.
      const host = taskHosting(runtime, view, ctx, target)
      call.answer(ctx.mcpReq.inputResponses)
      return { call, host }
    }
    // The tasks extension over a 2025 child (hosted-tasks.ts): a tool that runs only as a task needs the opt-in; one of a child with 2025 core tasks is asked for one.
    if (needsTaskOptIn(runtime, view, ctx, target)) throw missingTasksExtension()
    const host = taskHosting(runtime, view, ctx, target)
    const call = parked.open(view, target, ctx)
    call.clientCapabilities = sent.clientCapabilities
    this.startCall(ctx, call, host, sent, run)
    return { call, host }
  }

  /** Starts a new call: the child gets the retry's own fields back, and the caller's era with its log level, capabilities and tasks. */
  private startCall(
    ctx: ServerContext,
    call: ParkedCall,
    host: TaskHosting | undefined,
    sent: CallEnvelope,
    run: ForwardRun,
  ): void {
    const { requestState, logLevel, clientCapabilities } = sent
    const retry = {
      ...(ctx.mcpReq.inputResponses ? { inputResponses: ctx.mcpReq.inputResponses } : {}),
      ...(typeof requestState === 'string' ? { requestState } : {}),
      ...(host?.core ? { task: { ttl: HOSTED_TASK_TTL_MS } } : {}),
    }
    const callerEra = {
      era: 'modern' as const,
      ...(logLevel ? { logLevel } : {}),
      ...(clientCapabilities ? { clientCapabilities } : {}),
    }
    const { owner } = this.options
    const ownerFields = owner !== undefined ? { owner, principalName: owner } : {}
    // The connection that answers is where a task it makes lives (a scoped server's: the caller's own instance).
    const tasks = taskCaller(this.options.tasks, ctx)
    const answered: PrincipalForward['answered'] = (child, result) => {
      call.answeredBy = child
      tasks.answered?.(child, result)
    }
    call.start((origin) =>
      run(
        {
          cancellation: call.cancellation,
          caller: origin,
          callerEra,
          onProgress: (p) => call.progress(p),
          protocolVersion: MODERN_PROTOCOL_VERSION,
          answered,
          ...ownerFields,
        },
        retry,
      ),
    )
  }
}

/** Where a round's log messages and progress go: the request's own stream (progress only when it asked, with its token). */
function roundSink(ctx: ServerContext): RoundSink {
  const token = ctx.mcpReq._meta?.progressToken
  return {
    log: (level, data, server) => void ctx.mcpReq.log(level, data, server).catch(() => {}),
    progress: (p) => {
      if (token !== undefined)
        void ctx.mcpReq
          .notify({ method: 'notifications/progress', params: { ...p, progressToken: token } })
          .catch(() => {})
    },
  }
}
