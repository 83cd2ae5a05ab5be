import { McpServer, ProtocolError, type ServerCapabilities, type ServerContext } from '@modelcontextprotocol/server'
import { LOG_LEVEL_META_KEY, type JSONRPCNotification, type LoggingLevel, type RequestId } from '@modelcontextprotocol/client'
import { hasSkillsExtension } from '../children/child.js'
import { Cancellation } from '../protocol/cancellation.js'
import type { RelayOutcome } from '../protocol/request-relay.js'
import { skillScope, type CredentialView } from '../principal/credential-view.js'
import type { PrincipalView } from '../principal/view.js'
import { callVisibleTool, visibleTools } from '../runtime/principal-tools.js'
import type { ConnectionHandle, Runtime } from '../runtime/runtime.js'
import { decodeCursor, paginate } from './pagination.js'
import { completeVisible, getVisiblePrompt, instructionsFor, readVisibleResource, skillSourcesFor, visiblePrompts, visibleResources, visibleTemplates, type PrincipalForward } from './principal-requests.js'
import { registerSkillHandlers, skillsCapability } from './skills-handlers.js'

/** How long a 2026-era client may keep a list (`ttlMs`): there is no list_changed for it yet, so a child's new tools show within this. */
export const MODERN_LIST_TTL_MS = 30_000

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
}

/** A relayed answer as an SDK handler returns it: the child's result untouched, or its error thrown with code and data. */
function answer(outcome: RelayOutcome | undefined): Record<string, unknown> {
  if (!outcome) throw new ProtocolError(-32800, 'Request cancelled')
  if (outcome.ok) return outcome.result
  const error = outcome.error as { code: number; message: string; data?: unknown }
  throw new ProtocolError(error.code, error.message, error.data)
}

/**
 * One 2026-era request as a caller of the children: what `Runtime` routes a
 * child's log messages and requests by while a call is in flight. Joins the
 * runtime only for the length of that call. A child's log message comes
 * back on the call's own stream when the request's envelope asked for that
 * level (`ctx.mcpReq.log`); a child's request (elicitation, sampling, roots)
 * is refused: the 2026 era asks the client through `input_required`
 * results, which myc does not bridge yet.
 */
class RequestCaller implements ConnectionHandle {
  readonly clientHasRoots = false
  constructor(
    private readonly view: PrincipalView,
    private readonly ctx: ServerContext,
  ) {}
  catalogueChanged(): void {}
  childNotification(server: string, notification: JSONRPCNotification, related?: RequestId): void {
    // Only what belongs to this call: outside any call, a log message or resource update is no 2026 request's business.
    if (related === undefined || notification.method !== 'notifications/message' || !this.view.serverVisible(server)) return
    const params = (notification.params ?? {}) as { level?: LoggingLevel; data?: unknown }
    if (typeof params.level !== 'string') return
    void this.ctx.mcpReq.log(params.level, params.data, server).catch(() => {})
  }
  reaches(server: string): boolean {
    return this.view.serverVisible(server)
  }
  canAnswer(): boolean {
    return false
  }
  forwardRequest(server: string, method: string): Promise<Record<string, unknown>> {
    return Promise.reject(new ProtocolError(-32601, `The 2026-07-28 client calling through mycelium cannot be asked ${method} during a call (asked by server "${server}"): myc does not turn it into an input_required result yet`))
  }
  isSubscribed(): boolean {
    return false
  }
}

/** Lists already made for a view, until its principal or the catalogue changes (views are per credential, so they outlive requests). */
const toolLists = new WeakMap<PrincipalView, { revision: unknown; catalogue: number; tools: readonly unknown[] }>()

function toolsOf(runtime: Runtime, view: PrincipalView): readonly unknown[] {
  const revision = view.revision?.()
  const catalogue = runtime.catalogue.revision.tools
  const cached = toolLists.get(view)
  if (cached && cached.revision === revision && cached.catalogue === catalogue) return cached.tools
  const tools = visibleTools(runtime, view).map((t) => t.def)
  toolLists.set(view, { revision, catalogue, tools })
  return tools
}

/** What the children together offer a 2026-era client: no list_changed and no resource subscriptions (no subscriptions/listen yet), no tasks. */
function capabilitiesOf(runtime: Runtime, view: PrincipalView): ServerCapabilities {
  const children = [...runtime.supervisor.children.values()]
  // A lazy child not started yet may support anything, so it counts as all.
  const any = (pick: (caps: ServerCapabilities) => unknown) => children.some((c) => c.state !== 'RUNNING' || Boolean(c.capabilities && pick(c.capabilities)))
  const caps: ServerCapabilities = { tools: { listChanged: false }, logging: {} }
  if (any((c) => c.prompts)) caps.prompts = { listChanged: false }
  if (any((c) => c.resources)) caps.resources = { listChanged: false }
  if (any((c) => c.completions)) caps.completions = {}
  if (view.servedSkills || children.some((c) => hasSkillsExtension(c.capabilities))) {
    caps.resources = { listChanged: false }
    ;(caps as Record<string, unknown>).extensions = skillsCapability
  }
  return caps
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
  const { runtime, view, stepUp } = options
  const pageSize = options.pageSize ?? 1_000
  const ttlMs = options.listTtlMs ?? MODERN_LIST_TTL_MS
  await runtime.whenStarted()
  const hint = { ttlMs, cacheScope: 'private' as const }
  const instructions = instructionsFor(runtime, view)
  const mcp = new McpServer(
    { name: 'mycelium', version: runtime.deps.version },
    {
      ...(instructions ? { instructions } : {}),
      cacheHints: { 'tools/list': hint, 'prompts/list': hint, 'resources/list': hint, 'resources/templates/list': hint, 'server/discover': hint },
    },
  )
  const activate = view.activateTool()
  // The SDK warns on every registration of a name outside its tool-name rule (a custom namespace.separator): then no challenge, and the call answers how to get the skill.
  if (stepUp && activate && /^[A-Za-z0-9._-]{1,128}$/.test(activate.name)) {
    mcp.registerTool(
      activate.name,
      {
        description: activate.description ?? '',
        scopeChallenge: ({ request }) => {
          const skill = view.skillToStepUp(request.params?.name, request.params?.arguments)
          if (skill === undefined || !/^[\u0021\u0023-\u005B\u005D-\u007E]+$/.test(skillScope(skill))) return undefined
          return { scopes: [skillScope(skill)], errorDescription: `Skill ${skill} needs the scope ${skillScope(skill)}` }
        },
      },
      // Never called: tools/call below is myc's; this registration carries the scope challenge only.
      () => ({ content: [], isError: true }),
    )
  }
  const server = mcp.server
  server.registerCapabilities(capabilitiesOf(runtime, view))
  const caps = server.getCapabilities()
  const reaches = (s: string) => view.serverVisible(s)

  /**
   * Runs a forwarded request as a caller the runtime knows for its length
   * (a child's log message or request finds it). A modern child hears the
   * request's log level in myc's envelope, and its `input_required` answer
   * comes back as it is: the client's retry brings `inputResponses` and
   * `requestState`, which the SDK lifts off the params, so they are put back
   * for the child.
   */
  const forwarded = async (ctx: ServerContext, run: (forward: PrincipalForward, retry: Record<string, unknown>) => Promise<RelayOutcome | undefined>) => {
    const caller = new RequestCaller(view, ctx)
    const cancellation = Cancellation.from(ctx.mcpReq.signal)
    const token = ctx.mcpReq._meta?.progressToken
    const onProgress = token !== undefined ? (p: { progress: number; total?: number; message?: string }) => void ctx.mcpReq.notify({ method: 'notifications/progress', params: { ...p, progressToken: token } }).catch(() => {}) : undefined
    const logLevel = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] as LoggingLevel | undefined
    const requestState = ctx.mcpReq.requestState<unknown>()
    const retry = { ...(ctx.mcpReq.inputResponses ? { inputResponses: ctx.mcpReq.inputResponses } : {}), ...(typeof requestState === 'string' ? { requestState } : {}) }
    runtime.addConnection(caller)
    try {
      return answer(await run({ cancellation, caller: { connection: caller, requestId: ctx.mcpReq.id }, callerEra: { modern: true, ...(logLevel ? { logLevel } : {}) }, ...(onProgress ? { onProgress } : {}) }, retry))
    } finally {
      runtime.removeConnection(caller)
    }
  }

  server.setRequestHandler('tools/list', async (request) => {
    await runtime.startLazy(reaches)
    const page = paginate(toolsOf(runtime, view), decodeCursor(request.params?.cursor, 'tools'), pageSize, 'tools')
    return { tools: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as never
  })
  server.setRequestHandler('tools/call', (request, ctx) =>
    forwarded(ctx, async (forward, retry) => {
      const called = await callVisibleTool(runtime, view, { ...request.params, ...retry } as Record<string, unknown>, { ...forward, builtin: () => ({ signal: ctx.mcpReq.signal }) })
      return called?.outcome
    }) as never,
  )
  if (caps.prompts) {
    server.setRequestHandler('prompts/list', async (request) => {
      await runtime.startLazy(reaches)
      const page = paginate(visiblePrompts(runtime, view), decodeCursor(request.params?.cursor, 'prompts'), pageSize, 'prompts')
      return { prompts: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as never
    })
    server.setRequestHandler('prompts/get', (request, ctx) => forwarded(ctx, (forward, retry) => getVisiblePrompt(runtime, view, { ...request.params, ...retry }, forward)) as never)
  }
  if (caps.resources) {
    server.setRequestHandler('resources/list', async (request) => {
      await runtime.startLazy(reaches)
      const page = paginate(visibleResources(runtime, view), decodeCursor(request.params?.cursor, 'resources'), pageSize, 'resources')
      return { resources: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as never
    })
    server.setRequestHandler('resources/templates/list', (request) => {
      const page = paginate(visibleTemplates(runtime, view), decodeCursor(request.params?.cursor, 'templates'), pageSize, 'templates')
      return { resourceTemplates: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) } as never
    })
    server.setRequestHandler('resources/read', (request, ctx) => forwarded(ctx, (forward, retry) => readVisibleResource(runtime, view, { ...request.params, ...retry }, forward)) as never)
  }
  if (caps.completions) {
    server.setRequestHandler('completion/complete', (request, ctx) => forwarded(ctx, (forward) => completeVisible(runtime, view, request.params as Record<string, unknown>, forward)) as never)
  }
  if ((caps as { extensions?: unknown }).extensions) registerSkillHandlers(server, skillSourcesFor(runtime, view), pageSize)
  return mcp
}
