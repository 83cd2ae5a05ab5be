import { ProtocolError, type Server } from '@modelcontextprotocol/server'
import type { ClientCapabilities, RequestId } from '@modelcontextprotocol/client'
import { passthrough } from '../../protocol/passthrough.js'
import { RpcCode } from '../../protocol/facts.js'
import type { BuiltinCallContext } from '../../principal/view.js'

/** Whether a 2025 client that declared `caps` can be asked a child's `method`. */
export function canAnswer(
  caps: ClientCapabilities | undefined,
  method: string,
  params: Record<string, unknown> | undefined,
): boolean {
  if (!caps) return false
  if (method === 'roots/list') return Boolean(caps.roots)
  if (method === 'elicitation/create')
    return Boolean(caps.elicitation) && (params?.mode !== 'url' || Boolean((caps.elicitation as { url?: unknown }).url))
  if (method === 'sampling/createMessage') return Boolean(caps.sampling)
  if (method.startsWith('tasks/')) return Boolean(caps.tasks)
  return false
}

/**
 * A child's request (elicitation, sampling, roots, a task it made at the
 * client) asked of a 2025 client through the SDK server connected to it,
 * on the stream of the client's request `related` (Streamable HTTP);
 * refused with -32601 when the client did not declare what it needs.
 * Elicitation messages name the server that asks.
 */
export async function askClient(
  srv: Server,
  server: string,
  method: string,
  params: Record<string, unknown> | undefined,
  signal: AbortSignal,
  related?: RequestId,
): Promise<Record<string, unknown>> {
  const caps = srv.getClientCapabilities()
  // On the stream of the client's request that caused it (Streamable HTTP); stdio ignores it.
  const on = related !== undefined ? { relatedRequestId: related } : {}
  if (method === 'roots/list') {
    if (!caps?.roots)
      throw new ProtocolError(RpcCode.methodNotFound, 'The MCP client connected to mycelium does not provide roots')
    return srv.request({ method, params: params ?? {} }, passthrough, { signal, ...on })
  }
  if (method === 'elicitation/create') {
    if (!caps?.elicitation)
      throw new ProtocolError(
        RpcCode.methodNotFound,
        `The MCP client connected to mycelium does not support elicitation (asked by server "${server}")`,
      )
    const mode = (params?.mode as string | undefined) ?? 'form'
    if (mode === 'url' && !(caps.elicitation as { url?: unknown }).url)
      throw new ProtocolError(
        RpcCode.methodNotFound,
        `The MCP client connected to mycelium does not support URL elicitation (asked by server "${server}")`,
      )
    const message = typeof params?.message === 'string' ? `[${server}] ${params.message}` : `[${server}]`
    return srv.request({ method, params: { ...params, message } }, passthrough, {
      signal,
      timeout: 10 * 60_000,
      ...on,
    })
  }
  if (method === 'sampling/createMessage') {
    if (!caps?.sampling)
      throw new ProtocolError(
        RpcCode.methodNotFound,
        `The MCP client connected to mycelium does not support sampling (asked by server "${server}")`,
      )
    return srv.request({ method, params: params ?? {} }, passthrough, { signal, timeout: 10 * 60_000, ...on })
  }
  if (method.startsWith('tasks/')) {
    // A child polls a task it created at the client (task-augmented sampling or elicitation).
    if (!caps?.tasks)
      throw new ProtocolError(RpcCode.methodNotFound, 'The MCP client connected to mycelium does not support tasks')
    return srv.request({ method, params: params ?? {} } as never, passthrough, {
      signal,
      timeout: 10 * 60_000,
      ...on,
    })
  }
  throw new ProtocolError(RpcCode.methodNotFound, `Method not found: ${method}`)
}

/** How a built-in asks the person at a 2025 client (BuiltinCallContext.elicit): on the stream of its request `related`; undefined when the client did not declare elicitation. */
export function elicitOf(srv: Server, related: RequestId): BuiltinCallContext['elicit'] {
  if (!srv.getClientCapabilities()?.elicitation) return undefined
  return async (message, requestedSchema) => {
    const result = await srv.request(
      { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema } },
      passthrough,
      { timeout: 10 * 60_000, relatedRequestId: related },
    )
    return result as { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }
  }
}
