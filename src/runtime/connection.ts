import type { ClientCapabilities, JSONRPCNotification, RequestId } from '@modelcontextprotocol/client'

/**
 * How the runtime reaches the clients connected to it: each connection of
 * a face (a 2025 session, a 2026 call parked on its client, a listen
 * stream) is a ConnectionHandle, and a forwarded call names its origin so
 * that what a child asks during it goes back there. Defined here, below
 * the faces that implement it (src/eras/).
 */

/** A connected client (one connection of the MCP server face), as the runtime sees it. */
export interface ConnectionHandle {
  catalogueChanged(kinds: ReadonlySet<'tools' | 'prompts' | 'resources'>): void
  /** A child's notification; `related` is the client's request it belongs to, when one is known. */
  childNotification(server: string, notification: JSONRPCNotification, related?: RequestId): void
  /** Whether this connection's principal reaches the server (so a child's request may go to it). */
  reaches(server: string): boolean
  /** Whether the client declared what answering a child's `method` needs (elicitation, sampling, roots…). */
  canAnswer(method: string, params: Record<string, unknown> | undefined): boolean
  /** Forwards a child's request to this client; `related` is the client's request during which the child asked. */
  forwardRequest(
    server: string,
    method: string,
    params: Record<string, unknown> | undefined,
    signal: AbortSignal,
    related?: RequestId,
  ): Promise<Record<string, unknown>>
  readonly clientHasRoots: boolean
  /** What the client declared (a 2025 connection's `initialize`); what a modern child's `input_required` may ask it for. */
  readonly clientCapabilities?: ClientCapabilities | undefined
  /**
   * Who the client is, for the instances of scoped servers (docs/team.md):
   * its person (`owner`; absent, whoever runs myc) and its 2025 session (a
   * 2026 listen stream has none: its subscriptions are its person's
   * instance's). Absent on a handle that is not a client's connection of
   * its own (a 2026 call, the agent): no instance's messages reach it
   * outside the calls it makes.
   */
  readonly who?: { readonly owner?: string; readonly sessionId?: string }
  /** Whether this is a call waiting for its client's answers (a parked call with questions out): a child's new request is likelier another call's. */
  awaitingClient?(): boolean
}

/** Who made a forwarded call: the connection and its client's request id (ChildConnection.forward's `caller`). */
export interface CallOrigin {
  connection: ConnectionHandle
  requestId: RequestId
}

/**
 * Whose call a child's own request or log message belongs to. A stdio child
 * cannot say which call made it ask, so the runtime goes by the calls in
 * flight to that child: calls of one connection only → that connection (and
 * that call); calls of several → `ambiguous` (never guessed); none → `none`.
 */
export type ChildRequestOrigin =
  { kind: 'call'; origin: CallOrigin } | { kind: 'ambiguous'; connections: number } | { kind: 'none' }
