import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client'
import type { PrincipalView } from '../principal/view.js'
import type { Runtime } from '../runtime/runtime.js'

/**
 * One protocol era's face on a stdio connection (docs/architecture.md,
 * "Each era behind one interface"): what StdioEraConnection (stdio-eras.ts)
 * hands a connection to once its first message chose the era. The 2025
 * face serves it as a session (a ClientConnection); the 2026 face with the
 * SDK's own stdio entry and a server per request. The faces are in
 * src/eras/; the composition root hands them in (ClientFaces,
 * http/era-route.ts).
 */
export interface StdioFace {
  /** Starts serving the connection's era side; the dispatcher feeds `channel` from then on. */
  serve(serving: StdioServing): StdioSide
}

/** What an era's side of a stdio connection is served with. */
export interface StdioServing {
  runtime: Runtime
  /** The launch's principal: a 2025 session's view (it escalates); a 2026 connection sees it as its credential. */
  view: PrincipalView
  channel: StdioChannel
  /** Told of what is refused or dropped (for the log; never on stdout). */
  onNote(note: string): void
  /** The era's server ended the connection itself (its client went away, or it could not start). */
  ended(): void
}

/** The era's side of the connection: a transport the dispatcher feeds, writing through to the stdio stream. */
export interface StdioChannel extends Transport {
  /** Sees each message handed to the era's server, before it does. */
  onInbound?: (message: JSONRPCMessage) => void
  /** Sees, and may rewrite, each message the era's server writes. */
  onOutbound?: (message: JSONRPCMessage) => JSONRPCMessage
}

/** An era's side being served. */
export interface StdioSide {
  /** Lets the era's server go: the connection ends, or its probe is dropped (the stream goes on in the other era). */
  close(): Promise<void>
}
