import type { CallToolResult } from '@modelcontextprotocol/client'
import { innerAnswer } from '../code/code-result.js'
import { runWith, type RunCaller } from '../code/code-runner.js'
import type { ToolTable } from '../code/protocol.js'
import { BUILTIN_SERVER } from '../policy/policy.js'
import type { CodeModeHandle, PrincipalView } from '../principal/view.js'
import type { Cancellation } from '../protocol/cancellation.js'
import type { SpanHandle } from '../telemetry/tracing.js'
import { withCarrier } from '../telemetry/trace-context.js'
import type { Runtime } from './runtime.js'
import type { InnerCall, ToolCallContext } from './call-context.js'

/** The tools the code sees now: myc's built-ins it may call under `mycelium`, then every visible child tool by server (config order). */
export function toolTable(runtime: Runtime, view: PrincipalView, code: CodeModeHandle): ToolTable {
  const separator = runtime.loaded.config.namespace.separator
  const prefix = `${BUILTIN_SERVER}${separator}`
  const servers = new Map<string, Array<[string, string]>>()
  const add = (server: string, tool: string, wireName: string) => {
    const list = servers.get(server)
    if (list) list.push([tool, wireName])
    else servers.set(server, [[tool, wireName]])
  }
  for (const t of code.builtins())
    if (t.name !== code.wireName)
      add(BUILTIN_SERVER, t.name.startsWith(prefix) ? t.name.slice(prefix.length) : t.name, t.name)
  for (const e of runtime.catalogue.tools()) if (view.toolVisible(e)) add(e.server, e.name, e.wireName)
  return [...servers]
}

export interface CodeCall {
  runtime: Runtime
  view: PrincipalView
  code: CodeModeHandle
  args: Record<string, unknown>
  /** The run_code call's own context: its cancellation cancels the run and every inner call in flight. */
  ctx: ToolCallContext
  /** The run_code call's span (tracing on): inner calls are its children. */
  span: SpanHandle | undefined
  runId: string
  call: InnerCall
}

/**
 * A run_code call (docs/code-mode.md): runs the code in its sandbox and
 * answers its inner calls through `call`, each with the run's id (the audit
 * log's `runId`), the run's trace context and a cancellation of its own that
 * the run's cancels (and the run's end: nothing of a run outlives it).
 */
export async function runCode(run: CodeCall): Promise<CallToolResult> {
  const { args, code, ctx } = run
  if (ctx.runId !== undefined) return toolError(`${code.wireName} cannot run inside a run: call the tools directly`)
  if (typeof args.code !== 'string' || args.code.trim() === '')
    return toolError(
      `${code.wireName} needs "code": the body of an async function, such as return await tools.<server>.<tool>({ … })`,
    )
  return runWith(code.runner, args.code, callerOf(run), ctx.cancellation)
}

/** What the runner asks of the run's caller while it runs: its view's tools, their changes, and its call path. */
function callerOf(run: CodeCall): RunCaller {
  const { runtime, view, code, ctx, span } = run
  const meta = span && runtime.tracing?.propagates ? withCarrier(undefined, span.carrier()) : undefined
  return {
    tools: () => toolTable(runtime, view, code),
    onChange(listener) {
      const offView = view.onChange(listener)
      const offCatalogue = runtime.onCatalogueChange(listener)
      return () => {
        offView()
        offCatalogue()
      }
    },
    async call(name, args, cancellation) {
      const refused = await (ctx.chargeInnerCall ?? view.chargeInnerCall?.bind(view))?.()
      if (refused !== undefined) return { ok: false, message: refused }
      const called = await run.call(
        { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
        innerContext(ctx, cancellation, run.runId),
      )
      return innerAnswer(called?.outcome as Parameters<typeof innerAnswer>[0])
    },
  }
}

/** An inner call's context: the run's caller (its client answers a child's questions, its credential's logins are used), its own cancellation, the run's id. */
function innerContext(outer: ToolCallContext, cancellation: Cancellation, runId: string): ToolCallContext {
  const ctx: ToolCallContext = {
    cancellation,
    runId,
    builtin: () => ({ ...outer.builtin(), signal: cancellation.signal }),
  }
  if (outer.requestId !== undefined) ctx.requestId = outer.requestId
  if (outer.principalName !== undefined) ctx.principalName = outer.principalName
  if (outer.protocolVersion !== undefined) ctx.protocolVersion = outer.protocolVersion
  if (outer.sessionId !== undefined) ctx.sessionId = outer.sessionId
  if (outer.owner !== undefined) ctx.owner = outer.owner
  if (outer.caller !== undefined) ctx.caller = outer.caller
  if (outer.callerEra !== undefined) ctx.callerEra = outer.callerEra
  if (outer.innerCall !== undefined) ctx.innerCall = outer.innerCall
  if (outer.chargeInnerCall !== undefined) ctx.chargeInnerCall = outer.chargeInnerCall
  return ctx
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true }
}
