import type { ChildConnection } from '../children/child.js'
import type { CallerEra } from '../children/child-session.js'
import type { BuiltinCallContext } from '../principal/view.js'
import type { Cancellation } from '../protocol/cancellation.js'
import type { ProgressParams, RelayOutcome } from '../protocol/request-relay.js'

/**
 * One inner call of a run_code run (docs/code-mode.md): THE function every
 * call the code makes goes through, decided again at the moment of the
 * call. For a session it is callVisibleTool with the session's view (policy,
 * guard, audit, budgets, telemetry and cancellation as for a client's own
 * call); a face may give its own in ToolCallContext.innerCall (the agent's,
 * with its approvals).
 */
export type InnerCall = (
  params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> },
  ctx: ToolCallContext,
) => Promise<{ outcome: RelayOutcome } | undefined>

export interface ToolCallContext {
  cancellation: Cancellation
  /** The caller's JSON-RPC id of the request, for its span (tracing). */
  requestId?: string | number
  /** The credential's name (an HTTP token's `name`, a JWT subject), never its value, for its span (tracing). */
  principalName?: string
  /** The protocol revision the caller speaks, and its HTTP session (2025 era), for its span (tracing). */
  protocolVersion?: string
  sessionId?: string
  /**
   * Whose own OAuth logins the call's HTTP server uses, when that server has
   * an `oauth` key (`myc serve --http`: each person calls as themselves); absent, the local user's.
   */
  owner?: string
  onProgress?: (progress: ProgressParams) => void
  /** What a built-in may need (a signal, elicitation); asked only by a built-in. */
  builtin: () => BuiltinCallContext
  /** Who makes the call (a client connection's request): the child's own requests during it go back there. */
  caller?: object
  /** The caller's era (absent: a 2025-era client), for a modern child's envelope and its input_required answers. */
  callerEra?: CallerEra
  /**
   * Hears of the connection that answered a tools/call of a child, with its
   * answer, before the caller has it: a task the child made lives there (a
   * scoped server's instance: its person's own), and its follow-ups go there.
   */
  answered?: (child: ChildConnection, result: Record<string, unknown>) => void
  /** The run_code run this call is made in (an inner call): recorded in the audit log. */
  runId?: string
  /** How a run_code call's inner calls are made (default: callVisibleTool with the same view). */
  innerCall?: InnerCall
  /**
   * The budget each inner call of a run_code run takes from, as a request of
   * its own would (`http.rateLimit` of the caller's credential): the refusal's
   * text when it is spent, else undefined.
   */
  chargeInnerCall?: () => Promise<string | undefined>
}
