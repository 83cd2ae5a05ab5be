import type {
  Client,
  ClientCapabilities,
  Implementation,
  JSONRPCMessage,
  LoggingLevel,
  ServerCapabilities,
  Transport,
} from '@modelcontextprotocol/client'
import type { Logger } from '../logger.js'
import type { Era } from '../protocol/facts.js'
import type { RelayOutcome, RelayRequestOptions, RequestRelay } from '../protocol/request-relay.js'

/**
 * One child's traffic in the era it speaks, behind one interface
 * (docs/architecture.md, "Each era behind one interface"). A ChildConnection
 * connects the child, supervises its state, and hands everything a running
 * child is sent to its session: the 2025 session is a plain relay; the 2026
 * session puts myc's `_meta` envelope on every request, asks a 2025 caller
 * what the child's `input_required` needs (the input bridge), maps 2025 core
 * tasks onto the tasks extension, converts the child's errors for a 2025
 * caller, and keeps the child's one `subscriptions/listen` open. Each start's
 * session asks the new process again for what clients asked of the child
 * (`SessionLink.kept`), so that nothing they asked dies with a process. The
 * implementations are in src/eras/; which one a child gets is decided by the
 * era it negotiated.
 */
export interface ChildSession {
  /** The era this session speaks. */
  readonly era: Era
  /**
   * Opens what the session keeps open while the child runs, and asks the new
   * process again for what myc's clients asked of the child (`kept`): a
   * 2026 child's listen names the resources held, a 2025 child is sent
   * resources/subscribe for each (a refusal is logged, never fails the
   * start). Before the child's lists are read.
   */
  open(): Promise<void>
  /** Sends one request of a caller and resolves with the child's answer (as the caller's era is to get it). */
  forward(method: string, params: Record<string, unknown> | undefined, options: ForwardOptions): Promise<RelayOutcome>
  /** Sends a notification (roots changed, cancelled…); one the era has not is dropped. */
  notify(method: string, params?: Record<string, unknown>): Promise<void>
  /** Sends a request through the SDK client (setLevel, subscribe…); one the era carries otherwise is kept for that. */
  request(
    method: string,
    params: Record<string, unknown> | undefined,
    timeoutMs: number,
  ): Promise<Record<string, unknown>>
  /** Resolves when the child answers the era's cheapest request within `timeoutMs` (its health check). */
  alive(timeoutMs: number): Promise<unknown>
  /** Sees each message from the child before the SDK does; true to drop it. */
  screen(message: JSONRPCMessage): boolean
  /**
   * The resources clients hold changed (`kept.resourceUris`): the child is
   * asked for the ones added and let go of the ones no longer held. Resolves
   * once it was asked for `added` (a resource just held, when given),
   * rejecting when it refused; a refusal of any other is logged.
   */
  resourcesChanged(added?: string): Promise<void>
  /**
   * The log level clients set changed (`kept.logLevel`): a 2025 child that
   * logs is sent it (logging/setLevel), rejecting when it refused; a 2026
   * child's requests carry it on their envelope.
   */
  levelChanged(): Promise<void>
  /** The child stopped: nothing more is kept open. */
  close(): void
}

/** What a forwarded request says of the client it comes from, for a 2026 child's envelope and its answers. */
export interface CallerEra {
  /** The caller's own era: a 2026 caller gets a child's `input_required` result as it is; a 2025 caller is asked the 2025 way (the input bridge). */
  era: Era
  /** The log level the caller asked for (a 2026 request's envelope); else the level last set for the child, if any. */
  logLevel?: LoggingLevel
  /** What the caller declared it can be asked (a 2026 request's envelope): a 2026 child asks only that, in its input_required results. */
  clientCapabilities?: ClientCapabilities
}

/** How one request is forwarded: the relay's options, who calls (so that the child's own requests during it go back there) and in what era. */
export type ForwardOptions = Omit<RelayRequestOptions, 'timeoutMs'> & {
  timeoutMs?: number
  caller?: object
  callerEra?: CallerEra
}

/** Who can be asked for a call's input: the client that made it. */
export interface InputSource {
  /** What the client declared (undefined: nothing, it cannot be asked). */
  capabilities: ClientCapabilities | undefined
  /** Sends one 2025 request to the client, on the stream of the call. */
  ask(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>
}

/** What a session is made with: the child as its ChildConnection connected it. */
export interface SessionLink {
  /** The child's key (server name). */
  readonly key: string
  readonly config: { readonly timeoutMs: number; readonly startupTimeoutMs: number }
  /** The SDK client over the child's transport. */
  readonly client: Client
  /** The relay of this connection: forwarded requests go below the SDK's request layer. */
  readonly relay: RequestRelay
  readonly transport: Transport
  /** What the child declared. */
  readonly capabilities: ServerCapabilities | undefined
  /** What the child was offered. */
  readonly offered: ClientCapabilities
  /** The revision negotiated with it. */
  readonly protocolVersion: string | undefined
  /** Who myc is, to the child. */
  readonly clientInfo: Implementation
  /** The child's log (tagged with its key). */
  readonly log: Logger
  /** What outlives a restart of the child, asked of each start again: the log level in force, the resources clients hold (children/child-record.ts). */
  readonly kept: { logLevel?: LoggingLevel; resourceUris: readonly string[] }
  /** The relay of the child running now, for a request sent later (a bridged call's retry); undefined once it stopped. */
  current(): RequestRelay | undefined
  /** The answer to a request for a child that is not running now. */
  notRunning(): RelayOutcome
  /** The client that made a forwarded call (ForwardOptions.caller), to be asked for input; undefined when it cannot be. */
  inputSource(caller: object): InputSource | undefined
}

/** The session of each era, as the composition root hands them in (src/eras/): a child gets the one of the era it negotiated. */
export type ChildSessions = Readonly<Record<Era, (link: SessionLink) => ChildSession>>
