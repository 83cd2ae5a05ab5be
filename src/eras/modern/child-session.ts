import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ClientCapabilities,
  type Implementation,
  type JSONRPCMessage,
  type LoggingLevel,
} from '@modelcontextprotocol/client'
import { passthrough } from '../../protocol/passthrough.js'
import type { ProgressParams, RelayOutcome, WireError } from '../../protocol/request-relay.js'
import { Cancellation } from '../../protocol/cancellation.js'
import { hasTasksExtension, RpcCode } from '../../protocol/facts.js'
import { MISSING_CAPABILITY_CODE, missingCapabilityFailure, runInputBridge } from './input-bridge.js'
import { coreCreateTaskResult, isTaskAugmented, withoutTaskAugmentation, withTasksExtension } from './task-mapping.js'
import { ListenKeeper } from './child-listen.js'
import type { CallerEra, ChildSession, ForwardOptions, SessionLink } from '../../children/child-session.js'

/** The requests whose `input_required` (2026-07-28) a 2025 caller is asked for through the bridge. */
const BRIDGED = new Set(['tools/call', 'prompts/get', 'resources/read'])

/**
 * A child spoken to in the 2026-07-28 era (no handshake): every request
 * carries myc's `_meta` envelope (its version and client info, the
 * caller's log level and capabilities: childMeta, below). What the child
 * answers goes back as it is to a 2026 caller; for a 2025 caller, an
 * `input_required` result is asked of it the 2025 way and the child retried
 * with the answers (the input bridge, input-bridge.ts), a `-32021` is said
 * the way the bridge says it, and a task-augmented tools/call (2025-11-25
 * core tasks) becomes the tasks extension's opt-in, its task answered in the
 * 2025 shape (task-mapping.ts). The child's list changes and the updates of the
 * resources clients subscribed to come on one `subscriptions/listen`
 * (child-listen.ts); `logging/setLevel` and roots list_changed are not
 * sent (the level rides on each request's envelope), and health is
 * `server/discover`.
 */
export class ModernChildSession implements ChildSession {
  readonly era = 'modern'
  /** What the child is told on every request: the envelope's constant part. */
  private readonly envelope: EnvelopeMaterial
  private listener: ListenKeeper | undefined

  constructor(private readonly link: SessionLink) {
    this.envelope = {
      protocolVersion: link.protocolVersion!,
      clientInfo: link.clientInfo,
      clientCapabilities: link.offered,
    }
  }

  /** Opens the child's listen (its list changes, the subscribed resources' updates), before its lists are read so that no change falls between. */
  async open(): Promise<void> {
    const { link } = this
    this.listener = new ListenKeeper({
      client: link.client,
      capabilities: link.capabilities,
      uris: () => link.kept.resourceUris,
      log: link.log,
      ackTimeoutMs: Math.min(link.config.startupTimeoutMs, 10_000),
    })
    // A listen that could not be opened is retried by the keeper itself (with backoff); the start goes on.
    await this.listener.start().catch(() => {})
  }

  forward(method: string, params: Record<string, unknown> | undefined, options: ForwardOptions): Promise<RelayOutcome> {
    const asTask = this.asTask(method, params, options.callerEra)
    if (asTask) {
      params = withoutTaskAugmentation(params)
      options = { ...options, callerEra: asTask }
    }
    const callerEra = options.callerEra
    let outcome = this.link.relay.request(
      method,
      this.enveloped(params, callerEra),
      options,
      this.link.config.timeoutMs,
    )
    // A 2025 caller: an input_required result is asked of it (the bridge); a -32021 (the child needs what the caller did not declare) is said the way the bridge says it.
    if (callerEra?.era !== 'modern') {
      const asked = params
      outcome = outcome.then((o) => {
        if (o.ok) return isInputRequired(o.result) ? this.bridge(method, asked, o.result, options) : o
        return o.error.code === MISSING_CAPABILITY_CODE && BRIDGED.has(method)
          ? missingCapabilityFailure(this.link.key, method, o.error)
          : o
      })
    }
    if (asTask)
      outcome = outcome.then((o) => (o.ok ? { ok: true, result: coreCreateTaskResult(o.result) ?? o.result } : o))
    return outcome
  }

  /**
   * A 2025 caller's task-augmented tools/call (2025-11-25 core tasks) of a
   * child with the tasks extension: the caller as the extension's opt-in
   * declares it (task-mapping.ts); undefined for any other request.
   */
  private asTask(method: string, params: Record<string, unknown> | undefined, caller: CallerEra | undefined) {
    if (caller?.era === 'modern' || method !== 'tools/call' || !isTaskAugmented(params)) return undefined
    if (!hasTasksExtension(this.link.capabilities)) return undefined
    return {
      era: 'legacy',
      ...caller,
      clientCapabilities: withTasksExtension(caller?.clientCapabilities ?? this.envelope.clientCapabilities),
    } satisfies CallerEra
  }

  /** The params with myc's envelope in `_meta` (the caller's own keys kept, its envelope and credentials not). */
  private enveloped(params: Record<string, unknown> | undefined, caller: CallerEra | undefined) {
    const logLevel = caller?.logLevel ?? this.link.kept.logLevel
    return { ...params, _meta: childMeta(params?._meta, this.envelope, logLevel, caller?.clientCapabilities) }
  }

  /**
   * The child answered a 2025 caller with `input_required`: the caller is
   * asked the 2025 way and the child's request retried with the answers
   * (input-bridge.ts). Without a caller to ask (no client connection made
   * the call), or for a request the 2026 revision does not let a server
   * answer so, the clear error `-32603` at once.
   */
  private bridge(
    method: string,
    params: Record<string, unknown> | undefined,
    first: Record<string, unknown>,
    options: ForwardOptions,
  ): Promise<RelayOutcome> {
    const { link } = this
    const source = options.caller && BRIDGED.has(method) ? link.inputSource(options.caller) : undefined
    if (!source) return Promise.resolve({ ok: false, error: inputRequiredError(link.key, method, first) })
    const timeoutMs = options.timeoutMs ?? link.config.timeoutMs
    const progress = progressHook(options.onProgress)
    return runInputBridge({
      server: link.key,
      method,
      params,
      first,
      source,
      signal: options.cancellation ? options.cancellation.signal : new AbortController().signal,
      timeoutMs,
      onProgressHook: progress.hook,
      retry: (retried, signal) => {
        const relay = link.current()
        if (!relay) return Promise.resolve(link.notRunning())
        return relay.request(method, this.enveloped(retried, options.callerEra), {
          timeoutMs,
          cancellation: Cancellation.from(signal),
          ...(progress.onProgress ? { onProgress: progress.onProgress } : {}),
        })
      },
    })
  }

  async notify(method: string, params?: Record<string, unknown>): Promise<void> {
    // The 2026 era has no roots list_changed (roots are asked per request).
    if (method === 'notifications/roots/list_changed') return
    // A child going away meanwhile is the supervisor's to notice: a lost notification changes nothing for it.
    await this.link.transport
      .send(params ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', method })
      .catch(() => {})
  }

  async request(method: string, params: Record<string, unknown> | undefined, timeoutMs: number) {
    // logging/setLevel is gone in the 2026 era: the level (the record's, children/child-record.ts) rides on each forwarded request's envelope instead.
    if (method === 'logging/setLevel') return {}
    return this.link.client.request({ method, params: params ?? {} }, passthrough, { timeout: timeoutMs })
  }

  /** ping is gone in the 2026 era: server/discover is the cheapest request a 2026 child answers. */
  alive(timeoutMs: number): Promise<unknown> {
    return this.link.client.discover({ timeout: timeoutMs })
  }

  screen(message: JSONRPCMessage): boolean {
    return this.listener?.screen(message) === true
  }

  resourcesChanged(): Promise<void> {
    return this.listener?.update() ?? Promise.resolve()
  }

  /** Nothing is sent: the level in force (`kept.logLevel`) rides on each later request's envelope. */
  levelChanged(): Promise<void> {
    return Promise.resolve()
  }

  close(): void {
    this.listener?.stop()
  }
}

/** Progress of a retried request reaches the caller and pushes the bridged call's deadline back, as it does for any call. */
function progressHook(callerProgress: ((progress: ProgressParams) => void) | undefined) {
  let touch: (() => void) | undefined
  const onProgress = callerProgress
    ? (progress: ProgressParams) => {
        touch?.()
        callerProgress(progress)
      }
    : undefined
  return { onProgress, hook: (t: () => void) => (touch = t) }
}

// The envelope: what a 2026 child is told on every request, and what its answers mean to a caller.

/** The reserved `_meta` keys of the 2026 envelope, all under this prefix: a caller's own are replaced by what myc says. */
const RESERVED_PREFIX = 'io.modelcontextprotocol/'

/**
 * `_meta` keys that look like credentials: never forwarded to a child,
 * whatever the caller put there. A client's token travels in the HTTP
 * `Authorization` header, which myc never forwards; this catches one that
 * was put into `_meta` by mistake or on purpose. `progressToken` is not a
 * credential (the relay replaces it with its own).
 */
const CREDENTIAL_KEY =
  /(^|[^a-z])(auth|authorization|bearer|token|access[-_]?token|id[-_]?token|refresh[-_]?token|api[-_]?key|apikey|secret|password|passwd|credential|credentials|cookie|session[-_]?id)([^a-z]|$)/i

export function isCredentialKey(key: string): boolean {
  if (key === 'progressToken') return false
  // camelCase words become separate: accessToken → access-Token.
  return CREDENTIAL_KEY.test(key.replace(/([a-z0-9])([A-Z])/g, '$1-$2'))
}

/** What myc tells a modern child about itself on every request: the envelope's constant part. */
export interface EnvelopeMaterial {
  protocolVersion: string
  clientInfo: Implementation
  /** What myc offers that child (the capabilities it connected with). */
  clientCapabilities: ClientCapabilities
}

/**
 * The `_meta` a modern child gets with a forwarded request: the caller's
 * own keys (trace context, vendor keys) without its envelope keys and
 * without anything credential-like, then myc's envelope (its version,
 * client info, the log level when known, and the client capabilities of
 * the caller when known: what the caller can be asked, through myc, is what
 * it declared; else what myc offers the child).
 */
export function childMeta(
  callerMeta: unknown,
  material: EnvelopeMaterial,
  logLevel: LoggingLevel | undefined,
  callerCapabilities?: ClientCapabilities,
): Record<string, unknown> {
  const meta: Record<string, unknown> = {}
  if (callerMeta && typeof callerMeta === 'object' && !Array.isArray(callerMeta)) {
    for (const [key, value] of Object.entries(callerMeta)) {
      if (key.startsWith(RESERVED_PREFIX) || isCredentialKey(key)) continue
      meta[key] = value
    }
  }
  meta[PROTOCOL_VERSION_META_KEY] = material.protocolVersion
  meta[CLIENT_INFO_META_KEY] = material.clientInfo
  meta[CLIENT_CAPABILITIES_META_KEY] = callerCapabilities ?? material.clientCapabilities
  if (logLevel !== undefined) meta[LOG_LEVEL_META_KEY] = logLevel
  return meta
}

/** JSON-RPC code of the answer to a caller whose call a modern child answered with `input_required` when nobody can be asked. */
const INPUT_REQUIRED_UNBRIDGED = RpcCode.internalError

/**
 * The error a caller gets when a modern child answers its call with
 * `input_required` and there is nobody to ask: a call that does not come
 * from an MCP client connection (the agent of `myc run` and `myc chat`), or
 * a request the bridge does not handle (completion/complete, which the
 * 2026 revision does not let a server answer so). A 2025 client's
 * tools/call, prompts/get and resources/read are bridged instead
 * (input-bridge.ts). A clear answer at once, not a call that never ends.
 */
export function inputRequiredError(server: string, method: string, result: Record<string, unknown>): WireError {
  const requests =
    result.inputRequests && typeof result.inputRequests === 'object'
      ? Object.values(result.inputRequests as Record<string, unknown>)
      : []
  const asked = [
    ...new Set(
      requests
        .map((r) => (r && typeof r === 'object' ? (r as { method?: unknown }).method : undefined))
        .filter((m): m is string => typeof m === 'string'),
    ),
  ]
  const what = asked.length > 0 ? asked.join(', ') : 'input'
  return {
    code: INPUT_REQUIRED_UNBRIDGED,
    message: `Server "${server}" (MCP 2026-07-28) asked for input (${what}) to answer ${method}, and there is no MCP client to ask: the call does not come from a client connected to mycelium.`,
    data: { server, method, resultType: 'input_required', inputRequests: asked },
  }
}

/** Whether a child's result is a 2026 `input_required` result. */
function isInputRequired(result: Record<string, unknown>): boolean {
  return result.resultType === 'input_required'
}
