import type { ChildConnection } from '../children/child.js'
import type { InstanceInfo } from '../children/instances.js'
import type { PrincipalView } from '../principal/view.js'
import type { Cancellation } from '../protocol/cancellation.js'
import { RelayErrorCode, type RelayOutcome } from '../protocol/request-relay.js'
import { carrierOf, withCarrier } from '../telemetry/trace-context.js'
import type { SpanAttributes, SpanHandle, Tracing } from '../telemetry/tracing.js'

/**
 * The spans of the requests myc serves (SERVER) and forwards to its
 * children (CLIENT), named and given attributes as the MCP semantic
 * conventions say: shared by the tool call path (principal-tools.ts) and a
 * principal's other requests (server/principal-requests.ts).
 */

/** Who calls, for a server span: the request id, the role, the credential's name (never its value). */
export function callerAttributes(
  view: Pick<PrincipalView, 'describe'>,
  ctx: { requestId?: string | number; principalName?: string; protocolVersion?: string; sessionId?: string },
): SpanAttributes {
  const role = view.describe?.()?.role
  return {
    ...(ctx.requestId !== undefined ? { 'jsonrpc.request.id': String(ctx.requestId) } : {}),
    ...(ctx.protocolVersion ? { 'mcp.protocol.version': ctx.protocolVersion } : {}),
    ...(ctx.sessionId ? { 'mcp.session.id': ctx.sessionId } : {}),
    ...(role ? { 'mycelium.role': role } : {}),
    ...(ctx.principalName ? { 'mycelium.principal': ctx.principalName } : {}),
  }
}

/**
 * A request to a child as a CLIENT span under `span` (`<method> <target>`):
 * the child gets that span as its parent in `_meta` (traceparent,
 * tracestate, baggage). Used for every request myc forwards while tracing.
 */
export async function forwardTraced(
  span: SpanHandle,
  tracing: Tracing,
  child: Pick<ChildConnection, 'forward'> & { protocolVersion?: string | undefined },
  request: {
    server: string
    method: string
    target: string
    params: Record<string, unknown>
    attributes?: SpanAttributes
  },
  ctx: { cancellation: Cancellation } & Parameters<ChildConnection['forward']>[2],
): Promise<RelayOutcome> {
  span.set({ 'mycelium.server': request.server })
  const client = tracing.start(`${request.method} ${request.target}`, 'client', span, {
    'mcp.method.name': request.method,
    'mycelium.server': request.server,
    'server.address': request.server,
    ...(child.protocolVersion ? { 'mcp.protocol.version': child.protocolVersion } : {}),
    ...request.attributes,
  })
  // Spans not exported (metrics alone): the caller's own context passes on untouched, as with tracing off.
  const params = tracing.propagates
    ? { ...request.params, _meta: withCarrier(request.params._meta, client.carrier()) }
    : request.params
  const outcome = await child.forward(request.method, params, ctx)
  if (ctx.cancellation.aborted) client.event('cancelled')
  // A timeout or a child that went away (a crash, a restart) is an event as well as the error status.
  else if (!outcome.ok && outcome.error.code === RelayErrorCode.timeout) client.event('timeout')
  else if (!outcome.ok && outcome.error.code === RelayErrorCode.connectionClosed) client.event('child_gone')
  endSpan(client, outcome)
  return outcome
}

/** A request myc serves as a SERVER span (`<method> <target>`, the MCP conventions' name) under the caller's `_meta` trace context. */
export function serverSpan(
  tracing: Tracing,
  method: string,
  target: string,
  params: Record<string, unknown> | undefined,
  attributes: SpanAttributes,
): SpanHandle {
  return tracing.start(target ? `${method} ${target}` : method, 'server', carrierOf(params?._meta), {
    'mcp.method.name': method,
    ...attributes,
  })
}

/**
 * Ends a span by the request's outcome, with the `error.type` the MCP
 * conventions give: the JSON-RPC error code, `tool_error` for an isError
 * result, `cancelled` for a request cancelled before it was answered.
 */
export function endSpan(span: SpanHandle, outcome: RelayOutcome | undefined): void {
  if (!outcome) span.end('cancelled', 'cancelled')
  else if (!outcome.ok) span.end(outcome.error.message, String(outcome.error.code))
  else if ((outcome.result as { isError?: boolean }).isError) span.end('the tool answered isError', 'tool_error')
  else span.end()
}

/** What a span says of the instance of a scoped server that served a request (docs/team.md). */
export function instanceAttributes(instance: InstanceInfo, child: ChildConnection): SpanAttributes {
  return {
    'mycelium.instance.scope': instance.scope,
    'mycelium.instance.principal': instance.person,
    ...(instance.session !== undefined ? { 'mycelium.instance.session': instance.session } : {}),
    ...(child.pid !== undefined ? { 'mycelium.instance.pid': child.pid } : {}),
  }
}
