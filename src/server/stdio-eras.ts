import type {
  JSONRPCMessage,
  MessageExtraInfo,
  RequestId,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/client'
import { classifyInboundRequest, PROTOCOL_VERSION_META_KEY, ProtocolErrorCode } from '@modelcontextprotocol/server'
import { MODERN_PROTOCOL_VERSION, type Era } from '../protocol/facts.js'
import { errorReply, JsonRpcError } from '../protocol/inbound.js'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'
import type { StdioChannel, StdioFace, StdioSide } from './stdio-face.js'

export type { StdioEraMode } from './stdio-era-mode.js'
import type { StdioEraMode } from './stdio-era-mode.js'

/** How long dropping a server/discover probe (the client went on with initialize) waits for the probe's answer. */
const PROBE_ANSWER_WAIT_MS = 3_000

/**
 * The era a connection's opening message asks for, by the body-only rules
 * of the SDK's own classifier (there are no headers on stdio): `initialize`
 * and every message without the 2026 `_meta` envelope claim are the 2025
 * era; `server/discover` and a message carrying the claim are 2026-07-28
 * (so is one whose envelope is malformed or names an unknown revision: the
 * 2026 era owes it its -32602 or -32022 answer). A response opens no era.
 */
export function openingEra(message: JSONRPCMessage): Era | undefined {
  const method = (message as { method?: unknown }).method
  if (typeof method !== 'string') return undefined
  if (method === 'server/discover') return 'modern'
  return classifyInboundRequest({ httpMethod: 'POST', body: message }).kind === 'legacy' ? 'legacy' : 'modern'
}

const isRequest = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } =>
  'method' in m && 'id' in m
const isResponse = (m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } => !('method' in m) && 'id' in m

/**
 * One era's side of the connection: a transport the era's server connects
 * to, fed by the dispatcher and writing through to the stdio stream. What
 * arrives before the server starts it waits in order. Requests handed over
 * and not yet answered are tracked, so a dropped probe still answers them.
 */
class EraChannel implements StdioChannel {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void
  /** Set when this era's server is let go of while the stream goes on (a dropped probe): its later writes are dropped. */
  detached = false
  /** Whether requests handed over are tracked until answered: only while a probe may still be dropped. */
  tracking = false
  private started = false
  private closed = false
  private readonly waiting: JSONRPCMessage[] = []
  readonly unanswered = new Set<RequestId>()
  private answered: (() => void) | undefined
  /** Sees each message handed to the era's server, before it does. */
  onInbound?: (message: JSONRPCMessage) => void
  /** Sees, and may rewrite, each message the era's server writes. */
  onOutbound?: (message: JSONRPCMessage) => JSONRPCMessage

  constructor(
    private readonly wire: Transport,
    /** Called when this era's server closes its side (not when the stream closes it). */
    private readonly onServerClose: () => void,
  ) {}

  async start(): Promise<void> {
    if (this.started) return
    this.started = true
    for (const message of this.waiting.splice(0)) this.onmessage?.(message)
  }

  deliver(message: JSONRPCMessage): void {
    if (this.closed) return
    this.onInbound?.(message)
    if (this.tracking && isRequest(message)) this.unanswered.add(message.id)
    if (this.started) this.onmessage?.(message)
    else this.waiting.push(message)
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.onOutbound) message = this.onOutbound(message)
    if (this.tracking && isResponse(message) && this.unanswered.delete(message.id) && this.unanswered.size === 0)
      this.answered?.()
    if (this.detached) return Promise.resolve()
    return this.wire.send(message, options)
  }

  /** Resolves once every request handed over is answered, or after `ms`. */
  whenAnswered(ms: number): Promise<void> {
    if (this.unanswered.size === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms)
      timer.unref()
      this.answered = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }

  /** The stream closed (the client went away): the era's server hears of it. */
  streamClosed(): void {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }

  /** The era's server closes its side. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.onServerClose()
    this.onclose?.()
  }

  setProtocolVersion(version: string): void {
    if (!this.detached) this.wire.setProtocolVersion?.(version)
  }
}

export interface StdioEraConnectionOptions {
  runtime: Runtime
  /** The launch's principal: a 2025 connection's session view (it escalates); a 2026 one sees it with escalation taken out. */
  view: PrincipalView
  /** The faces of the two eras (src/eras/): the connection is served by the face of the era it opened in. */
  faces: Readonly<Record<Era, { readonly stdio: StdioFace }>>
  /** Default `auto`. */
  era?: StdioEraMode
  /** Told of what is refused or dropped (for the log; never on stdout). */
  onNote?: (note: string) => void
}

type Phase =
  | { kind: 'opening' }
  /** `probe`: a server/discover opened the connection, and the client may still go on with initialize (probing in place). */
  | { kind: Era | 'probe'; side: StdioSide; channel: EraChannel }
  | { kind: 'closed' }

/**
 * One stdio client of `myc serve`, in the era its first message asks for
 * (docs/protocol-eras.md), decided once per connection and handed to that
 * era's face (stdio-face.ts) on a channel of its own:
 *
 * - 2025 (`initialize`, or any message without the 2026 envelope claim): a
 *   session; its principal escalates by `activate_skill`, with list_changed.
 * - 2026-07-28 (`server/discover`, or a request carrying the `_meta`
 *   envelope): the SDK's own stdio entry owns the 2026 wire, with the
 *   server the HTTP route makes per request, for the launch's credential
 *   view (role and --skills alone: activate_skill never changes the lists).
 *
 * A connection opened by server/discover that goes on with `initialize`
 * (a client probing in place) drops the 2026 server, once it has answered
 * the probe, and is served as 2025. The stream below (StdioServerStream)
 * has already answered every line that is not a JSON-RPC message, in either
 * era; each request that passes reaches exactly one era's server.
 */
export class StdioEraConnection {
  /** Called once when the client goes away or the connection ends. */
  onclose?: () => void
  private phase: Phase = { kind: 'opening' }
  private wire: Transport | undefined
  private readonly mode: StdioEraMode
  /** Messages waiting while the dispatcher is busy (dropping a probe). */
  private readonly queue: JSONRPCMessage[] = []
  private busy = false
  private ended = false

  constructor(private readonly options: StdioEraConnectionOptions) {
    this.mode = options.era ?? 'auto'
  }

  /** The era this connection was given, once its first message decided it. */
  get era(): Era | undefined {
    const { kind } = this.phase
    return kind === 'legacy' ? 'legacy' : kind === 'modern' || kind === 'probe' ? 'modern' : undefined
  }

  /** Reads the client's messages from `wire` (a StdioServerStream) until it ends. */
  async connect(wire: Transport): Promise<void> {
    this.wire = wire
    wire.onmessage = (message) => this.receive(message)
    wire.onerror = (error) => this.options.onNote?.(`stdio: ${error.message}`)
    wire.onclose = () => this.streamClosed()
    await wire.start()
  }

  private receive(message: JSONRPCMessage): void {
    if (this.busy || this.queue.length > 0) {
      this.queue.push(message)
      return
    }
    this.route(message)
  }

  /** Hands one message to its era; only dropping a probe makes the next ones wait. */
  private route(message: JSONRPCMessage): void {
    const phase = this.phase
    if (phase.kind === 'closed') return
    if (phase.kind === 'legacy') return phase.channel.deliver(message)
    if (
      this.mode === 'modern' &&
      isRequest(message) &&
      message.method === 'initialize' &&
      openingEra(message) === 'legacy'
    )
      return this.refuseInitialize(message)
    if ((phase.kind === 'modern' || phase.kind === 'probe') && isRequest(message) && this.refuseRevision(message))
      return
    if (phase.kind === 'modern') return phase.channel.deliver(message)
    const era = openingEra(message)
    if (phase.kind === 'probe') {
      // The client probed in place and went on in the 2025 era: the probe's server goes, the 2025 session comes.
      if (era === 'legacy' && this.mode === 'auto')
        return this.wait(this.dropProbe(phase).then(() => this.route(message)))
      if (era === 'modern' && isRequest(message) && message.method !== 'server/discover') {
        // Pinned: the probe can no longer be dropped.
        phase.channel.tracking = false
        phase.channel.unanswered.clear()
        this.phase = { ...phase, kind: 'modern' }
      }
      return phase.channel.deliver(message)
    }
    // Opening: the first message that names an era decides it.
    if (era === undefined)
      return this.options.onNote?.('dropped a response received before the connection chose its protocol era')
    if (this.mode === 'legacy' && era === 'modern') return this.refuseModern(message)
    if (era === 'legacy' && this.mode !== 'modern') {
      this.startLegacy().deliver(message)
      return
    }
    const channel = this.startModern(isRequest(message) && message.method === 'server/discover' ? 'probe' : 'modern')
    channel.deliver(message)
  }

  /** Runs `work` with the messages after this one waiting, then hands them on in order. */
  private wait(work: Promise<void>): void {
    this.busy = true
    void work
      .catch((error: unknown) => this.options.onNote?.(`stdio: ${String(error)}`))
      .finally(() => {
        this.busy = false
        while (!this.busy && this.queue.length > 0) this.route(this.queue.shift()!)
      })
  }

  private startLegacy(): EraChannel {
    const channel = new EraChannel(this.wire!, () => void this.wire!.close().catch(() => {}))
    this.phase = { kind: 'legacy', side: this.serve('legacy', channel), channel }
    return channel
  }

  private startModern(kind: 'modern' | 'probe'): EraChannel {
    const channel = new EraChannel(this.wire!, () => {
      // The 2026 server ended the connection itself (not a dropped probe): the stream goes too.
      if (!channel.detached) void this.wire!.close().catch(() => {})
    })
    const side = this.serve('modern', channel)
    channel.tracking = kind === 'probe'
    this.phase = { kind, side, channel }
    return channel
  }

  /** Hands the connection's era side to that era's face. */
  private serve(era: Era, channel: EraChannel): StdioSide {
    return this.options.faces[era].stdio.serve({
      runtime: this.options.runtime,
      view: this.options.view,
      channel,
      onNote: (note) => this.options.onNote?.(note),
      ended: () => this.end(),
    })
  }

  /** Lets the probe's 2026 server answer what it was asked (bounded), answers what it could not, and lets it go. */
  private async dropProbe(phase: { side: StdioSide; channel: EraChannel }): Promise<void> {
    await phase.channel.whenAnswered(PROBE_ANSWER_WAIT_MS)
    phase.channel.detached = true
    for (const id of phase.channel.unanswered) {
      void this.wire!.send(
        errorReply(
          id,
          ProtocolErrorCode.InternalError,
          'The server/discover probe was not answered in time: the client went on with initialize',
        ),
      ).catch(() => {})
    }
    phase.channel.unanswered.clear()
    await phase.side.close()
    if (this.phase.kind === 'closed') return
    this.phase = { kind: 'opening' }
  }

  /**
   * A request of a 2026 connection that names another revision in its
   * envelope is answered -32022 with the revision served, as the HTTP route
   * answers it (the SDK's stdio entry checks the revision of the opening
   * message only). True when refused.
   */
  private refuseRevision(message: JSONRPCMessage & { id: RequestId }): boolean {
    const meta = (message as { params?: { _meta?: unknown } }).params?._meta
    const requested =
      typeof meta === 'object' && meta !== null
        ? (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY]
        : undefined
    if (typeof requested !== 'string' || requested === MODERN_PROTOCOL_VERSION) return false
    void this.wire!.send({
      jsonrpc: '2.0',
      id: message.id,
      error: {
        code: ProtocolErrorCode.UnsupportedProtocolVersion,
        message: `Unsupported protocol version: ${requested}`,
        data: { supported: [MODERN_PROTOCOL_VERSION], requested },
      },
    }).catch(() => {})
    return true
  }

  /** `--era modern`: a 2025 handshake is refused, with the versions that are served. */
  private refuseInitialize(message: JSONRPCMessage & { id: RequestId }): void {
    const requested = (message as { params?: { protocolVersion?: unknown } }).params?.protocolVersion
    this.options.onNote?.('refused initialize: myc serve --era modern serves the 2026-07-28 era only')
    void this.wire!.send({
      jsonrpc: '2.0',
      id: message.id,
      error: {
        code: ProtocolErrorCode.UnsupportedProtocolVersion,
        message: `Unsupported protocol version${typeof requested === 'string' ? `: ${requested}` : ''}. This server (myc serve --era modern) speaks MCP ${MODERN_PROTOCOL_VERSION} only and has no initialize handshake: connect with a client that negotiates ${MODERN_PROTOCOL_VERSION} (server/discover), or run myc serve --era auto to serve the 2025 era too.`,
        data: { supported: [MODERN_PROTOCOL_VERSION], ...(typeof requested === 'string' ? { requested } : {}) },
      },
    }).catch(() => {})
  }

  /** `--era legacy`: a 2026 request is answered as by a 2025 server that does not know the method; a 2026 notification is dropped. */
  private refuseModern(message: JSONRPCMessage): void {
    if (!isRequest(message))
      return this.options.onNote?.(
        `dropped a 2026-07-28 notification (${(message as { method?: string }).method}): myc serve --era legacy`,
      )
    this.options.onNote?.(`refused ${message.method}: myc serve --era legacy serves the 2025 era only`)
    void this.wire!.send({
      jsonrpc: '2.0',
      id: message.id,
      error: {
        code: JsonRpcError.methodNotFound,
        message: 'Method not found',
        data: {
          reason: 'this server (myc serve --era legacy) serves the 2025 era only: open the connection with initialize',
        },
      },
    }).catch(() => {})
  }

  /** The client went away (stdin ended, its last answers written): the era's server hears of it. */
  private streamClosed(): void {
    const phase = this.phase
    if (phase.kind === 'legacy' || phase.kind === 'modern' || phase.kind === 'probe') phase.channel.streamClosed()
    // Left without a word (or before an era): nothing to offer children, no reason for them to wait.
    if (phase.kind === 'opening') this.options.runtime.offerClientCapabilities({})
    // A 2025 connection ends through its ClientConnection's onclose; the others end here.
    if (phase.kind !== 'legacy') this.end()
  }

  private end(): void {
    if (this.ended) return
    this.ended = true
    const phase = this.phase
    this.phase = { kind: 'closed' }
    // A 2025 side ends through its own close (which brought us here); the others are let go now.
    if (phase.kind === 'modern' || phase.kind === 'probe') void phase.side.close()
    this.onclose?.()
  }

  /** Ends the connection: its era's server and the stream. */
  async close(): Promise<void> {
    const phase = this.phase
    if (phase.kind !== 'opening' && phase.kind !== 'closed') await phase.side.close()
    await this.wire?.close().catch(() => {})
    this.end()
  }
}
