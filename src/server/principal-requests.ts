import { ProtocolErrorCode } from '@modelcontextprotocol/server'
import type { CallerEra } from '../children/child-session.js'
import type { Cancellation } from '../protocol/cancellation.js'
import type { ProgressParams, RelayOutcome } from '../protocol/request-relay.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import type { ServedSkill } from '../skills/skill-index.js'
import { listedTools, type ToolCallContext } from '../runtime/principal-tools.js'
import { callerAttributes, endSpan, forwardTraced, instanceAttributes, serverSpan } from '../runtime/request-spans.js'
import { childForCaller } from '../runtime/caller-child.js'
import type { ListKindName } from '../principal/seen-lists.js'
import type { SpanAttributes, SpanHandle } from '../telemetry/tracing.js'
import { findSkillFile, mapChildRead, readSkillFile, type SkillSources } from './skills-handlers.js'
import { RpcCode } from '../protocol/facts.js'

/**
 * What a principal may list, get, read and complete besides tools: one set
 * of functions for every face that serves it (the 2025 session's
 * ClientConnection, the 2026 stateless server), so hidden prompts,
 * resources and templates answer exactly as ones that do not exist,
 * whichever era asks. Tools are in ../runtime/principal-tools.ts.
 */

function unknownPrompt(name: unknown): RelayOutcome {
  return {
    ok: false,
    error: {
      code: RpcCode.invalidParams,
      message: `Unknown prompt: ${typeof name === 'string' ? name : JSON.stringify(name)}`,
    },
  }
}

function unknownResource(uri: unknown): RelayOutcome {
  // data.uri names the resource asked for (SEP-2164): what the client sent, so it reveals nothing of a hidden one.
  return {
    ok: false,
    error: {
      code: RpcCode.invalidParams,
      message: `Resource not found: ${typeof uri === 'string' ? uri : JSON.stringify(uri)}`,
      ...(typeof uri === 'string' ? { data: { uri } } : {}),
    },
  }
}

/** How a forwarded request reaches a child: its cancellation, progress, and who asked (so the child's own requests go back there). */
export interface PrincipalForward {
  cancellation: Cancellation
  /** The caller's JSON-RPC id of the request, for its span (tracing). */
  requestId?: string | number
  /** The credential's name, for its span (tracing). */
  principalName?: string
  /** Whose own OAuth logins a server with an `oauth` key is asked with (runtime/principal-tools.ts). */
  owner?: string
  /** The protocol revision the caller speaks, and its HTTP session (2025 era), for its span (tracing). */
  protocolVersion?: string
  sessionId?: string
  onProgress?: (progress: ProgressParams) => void
  caller?: object
  /** The caller's era (absent: a 2025-era client), for a modern child's envelope and its input_required answers. */
  callerEra?: CallerEra
  /** Hears of the connection that answered a tools/call, with its answer (where a task it made lives). */
  answered?: ToolCallContext['answered']
}

/** The running child that serves `uri`, when the principal reaches it. */
export function childForUri(runtime: Runtime, view: PrincipalView, uri: string) {
  const server = runtime.catalogue.serverForUri(uri)
  if (server === undefined || !view.serverVisible(server)) return undefined
  return runtime.supervisor.children.get(server)
}

/** The children's instructions the principal may read, one section per server it reaches. */
export function instructionsFor(runtime: Runtime, view: PrincipalView): string | undefined {
  const parts: string[] = []
  for (const child of runtime.supervisor.children.values()) {
    if (child.instructions && view.serverVisible(child.key))
      parts.push(`## ${child.key}\n\n${child.instructions.trim()}`)
  }
  return parts.length > 0 ? parts.join('\n\n') : undefined
}

/** The principal's skill sources: myc's own, and the visible children's. */
const NO_SKILLS: readonly ServedSkill[] = []

export function skillSourcesFor(runtime: Runtime, view: PrincipalView): SkillSources {
  const { catalogue, supervisor } = runtime
  const visible = (server: string) => view.childSkillsVisible?.(server) ?? false
  return {
    local: () => view.servedSkills?.() ?? NO_SKILLS,
    children: () => catalogue.childSkills().filter((c) => visible(c.server)),
    // The served skills and the children's are cached arrays, replaced when they change; which children's a principal sees changes with its revision.
    sources: () => [view.servedSkills?.() ?? NO_SKILLS, catalogue.childSkills(), view.revision?.()],
    resolveChild: (uri) => {
      const target = catalogue.childSkillUri(uri)
      return target && visible(target.server) ? target : undefined
    },
    forward: (server, method, params) => {
      const child = supervisor.children.get(server)
      return child
        ? child.forward(method, params, {})
        : Promise.resolve({ ok: false, error: { code: RpcCode.serverError, message: 'gone' } })
    },
  }
}

/**
 * What the principal sees of a kind of list now, exactly as the faces list
 * it (the tools, the prompts, and the resources with the templates and the
 * skills served as resources): the walk a client's list changes are judged
 * by (SeenLists), so it hears of a change only when its own answer changed.
 */
export function visibleList(runtime: Runtime, view: PrincipalView, kind: ListKindName): readonly unknown[] {
  if (kind === 'tools') return listedTools(runtime, view)
  if (kind === 'prompts') return visiblePrompts(runtime, view)
  const skills = skillSourcesFor(runtime, view)
  return [
    ...visibleResources(runtime, view),
    ...visibleTemplates(runtime, view),
    ...skills.children().map((c) => c.entry),
    ...skills.local(),
  ]
}

/** The prompts the principal sees now, as a client lists them. */
export function visiblePrompts(runtime: Runtime, view: PrincipalView): unknown[] {
  return runtime.catalogue
    .prompts()
    .filter((e) => view.promptVisible(e))
    .map((e) => e.wire)
}

/** The resources of the servers the principal reaches. */
export function visibleResources(runtime: Runtime, view: PrincipalView): unknown[] {
  return runtime.catalogue
    .resources()
    .filter((e) => view.serverVisible(e.server))
    .map((e) => e.def)
}

/** The resource templates of the servers the principal reaches. */
export function visibleTemplates(runtime: Runtime, view: PrincipalView): unknown[] {
  return runtime.catalogue
    .templates()
    .filter((e) => view.serverVisible(e.server))
    .map((e) => e.def)
}

/**
 * A forwarded request as a SERVER span when tracing is on (the caller's
 * `_meta` its parent), and the call to its child as a CLIENT span under it;
 * tracing off, `run` alone, with no span.
 */
async function traced(
  runtime: Runtime,
  view: PrincipalView,
  method: string,
  target: string,
  params: Record<string, unknown> | undefined,
  ctx: PrincipalForward,
  attributes: SpanAttributes,
  run: (span: SpanHandle | undefined) => Promise<RelayOutcome | undefined>,
): Promise<RelayOutcome | undefined> {
  const tracing = runtime.tracing
  if (tracing === undefined) return run(undefined)
  const span = serverSpan(tracing, method, target, params, { ...attributes, ...callerAttributes(view, ctx) })
  try {
    const outcome = await run(span)
    endSpan(span, outcome)
    return outcome
  } catch (error) {
    span.end(error instanceof Error ? error.message : String(error), '_OTHER')
    throw error
  }
}

/**
 * A list myc answers from its catalogue (tools/list, prompts/list,
 * resources/list, resources/templates/list) as a SERVER span named for the
 * method, under the caller's `_meta`, when tracing; no child is asked.
 */
export async function tracedList<T>(
  runtime: Runtime,
  view: PrincipalView,
  method: string,
  params: Record<string, unknown> | undefined,
  list: () => T | Promise<T>,
  caller: { protocolVersion?: string; sessionId?: string } = {},
): Promise<T> {
  const tracing = runtime.tracing
  if (tracing === undefined) return list()
  const span = serverSpan(tracing, method, '', params, callerAttributes(view, caller))
  try {
    const answer = await list()
    span.end()
    return answer
  } catch (error) {
    span.end(error instanceof Error ? error.message : String(error), '_OTHER')
    throw error
  }
}

/** A request to a child (the caller's own connection to a server logged in per person): under `span` as a CLIENT span when tracing. */
async function forward(
  runtime: Runtime,
  span: SpanHandle | undefined,
  server: string,
  method: string,
  target: string,
  params: Record<string, unknown>,
  ctx: PrincipalForward,
): Promise<RelayOutcome> {
  const reached = await childForCaller(runtime, server, ctx)
  // A person without a login: the way to log in, as this method's error (a tool call gets it as its result).
  if ('outcome' in reached)
    return reached.outcome.ok
      ? { ok: false, error: { code: ProtocolErrorCode.InternalError, message: toolText(reached.outcome.result) } }
      : reached.outcome
  const { child, instance } = reached
  if (span && instance) span.set(instanceAttributes(instance, child))
  return span && runtime.tracing
    ? forwardTraced(span, runtime.tracing, child, { server, method, target, params }, ctx)
    : child.forward(method, params, ctx)
}

function toolText(result: Record<string, unknown>): string {
  return (result.content as Array<{ text?: string }> | undefined)?.map((c) => c.text ?? '').join(' ') ?? ''
}

/** prompts/get as the principal: a visible prompt is forwarded under its own name, any other is unknown. Undefined when cancelled. */
export function getVisiblePrompt(
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown> | undefined,
  ctx: PrincipalForward,
): Promise<RelayOutcome | undefined> {
  const name = params?.name
  return traced(
    runtime,
    view,
    'prompts/get',
    typeof name === 'string' ? name : '',
    params,
    ctx,
    typeof name === 'string' ? { 'gen_ai.prompt.name': name } : {},
    async (span) => {
      const entry = typeof name === 'string' ? runtime.catalogue.promptByWire(name) : undefined
      if (!entry || !view.promptVisible(entry)) return unknownPrompt(name)
      if (!runtime.supervisor.children.get(entry.server)) return unknownPrompt(name)
      const outcome = await forward(
        runtime,
        span,
        entry.server,
        'prompts/get',
        entry.name,
        { ...params, name: entry.name },
        ctx,
      )
      return ctx.cancellation.aborted ? undefined : outcome
    },
  )
}

/**
 * resources/read as the principal: myc's own skill files, a visible child's
 * skill files (through its skill root only), else the resource of a server
 * it reaches. Anything else is not found (-32602). Undefined when cancelled.
 */
export function readVisibleResource(
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown> | undefined,
  ctx: PrincipalForward,
): Promise<RelayOutcome | undefined> {
  const uri = params?.uri
  return traced(
    runtime,
    view,
    'resources/read',
    typeof uri === 'string' ? uri : '',
    params,
    ctx,
    typeof uri === 'string' ? { 'mcp.resource.uri': uri } : {},
    (span) => readResource(runtime, view, params, ctx, span),
  )
}

async function readResource(
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown> | undefined,
  ctx: PrincipalForward,
  span: SpanHandle | undefined,
): Promise<RelayOutcome | undefined> {
  const uri = params?.uri
  const own = typeof uri === 'string' && view.servedSkills ? findSkillFile(uri, view.servedSkills()) : undefined
  // Reading a SKILL.md does not activate the skill: escalation stays with activate_skill.
  if (own) return { ok: true, result: readSkillFile(own) }
  if (typeof uri === 'string' && uri.startsWith('skill://')) {
    // Skill URIs are never routed as plain resources: only through the children's skill roots.
    const target = skillSourcesFor(runtime, view).resolveChild(uri)
    if (!target) return unknownResource(uri)
    const outcome = await forward(
      runtime,
      span,
      target.server,
      'resources/read',
      target.childUri,
      { ...params, uri: target.childUri },
      ctx,
    )
    if (ctx.cancellation.aborted) return undefined
    return outcome.ok ? { ok: true, result: mapChildRead(target.server, outcome.result) } : unknownResource(uri)
  }
  const child = typeof uri === 'string' ? childForUri(runtime, view, uri) : undefined
  if (!child) return unknownResource(uri)
  const outcome = await forward(runtime, span, child.key, 'resources/read', uri as string, params ?? {}, ctx)
  return ctx.cancellation.aborted ? undefined : outcome
}

/**
 * completion/complete as the principal, routed by its reference (a visible
 * prompt, or a template or resource of a server it reaches); a SERVER span
 * `completion/complete <prompt name or URI>` when tracing.
 */
export function completeVisible(
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown> | undefined,
  ctx: PrincipalForward,
): Promise<RelayOutcome | undefined> {
  const ref = params?.ref as { type?: string; name?: string; uri?: string } | undefined
  const target = typeof ref?.name === 'string' ? ref.name : typeof ref?.uri === 'string' ? ref.uri : ''
  return traced(runtime, view, 'completion/complete', target, params, ctx, {}, (span) =>
    complete(runtime, view, params, ctx, span),
  )
}

async function complete(
  runtime: Runtime,
  view: PrincipalView,
  params: Record<string, unknown> | undefined,
  ctx: PrincipalForward,
  span: SpanHandle | undefined,
): Promise<RelayOutcome | undefined> {
  const ref = params?.ref as { type?: string; name?: string; uri?: string } | undefined
  const none: RelayOutcome = { ok: true, result: { completion: { values: [], hasMore: false } } }
  const { catalogue, supervisor } = runtime
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') {
    const entry = catalogue.promptByWire(ref.name)
    if (!entry || !view.promptVisible(entry)) return unknownPrompt(ref.name)
    const child = supervisor.children.get(entry.server)
    if (!child?.capabilities?.completions) return none
    return forward(
      runtime,
      span,
      entry.server,
      'completion/complete',
      entry.name,
      { ...params, ref: { ...ref, name: entry.name } },
      ctx,
    )
  }
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') {
    const server = catalogue.serverForTemplate(ref.uri) ?? catalogue.serverForUri(ref.uri)
    if (server === undefined || !view.serverVisible(server)) return unknownResource(ref.uri)
    const child = supervisor.children.get(server)
    if (!child?.capabilities?.completions) return none
    return forward(runtime, span, server, 'completion/complete', ref.uri, params ?? {}, ctx)
  }
  return {
    ok: false,
    error: {
      code: RpcCode.invalidParams,
      message: 'completion/complete needs a ref of type ref/prompt or ref/resource',
    },
  }
}
