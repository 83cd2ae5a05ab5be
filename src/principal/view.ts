import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { PromptEntry, ToolEntry } from '../registry/catalogue.js'
import type { ServedSkill } from '../skills/skill-index.js'
import type { CodeRuns } from '../code/code-runner.js'
import type { AuditInstance } from '../audit.js'

/** What a built-in tool handler gets from the face that calls it (a client connection or the agent). */
export interface BuiltinCallContext {
  signal: AbortSignal
  /** Asks the person at the client (MCP elicitation); undefined when the client cannot. */
  elicit?: (
    message: string,
    requestedSchema: Record<string, unknown>,
  ) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> }>
}

/** Code mode of a session (`session.codeMode`, docs/code-mode.md), as the call path needs it. */
export interface CodeModeHandle {
  /** run_code's wire name: a call of it runs on the call path (runtime/principal-tools.ts). */
  wireName: string
  runner: CodeRuns
  /** The built-ins the code may call now, listed or not (run_code itself is not one of them). */
  builtins(): readonly Tool[]
}

/**
 * The seam between the merged catalogue and one client: what this principal
 * (role plus active skills) sees and may call. The server asks the view on
 * every request; it never stores what a client may see.
 */
export interface PrincipalView {
  toolVisible(entry: ToolEntry): boolean
  promptVisible(entry: PromptEntry): boolean
  /** Whether the principal reaches a server at all (its resources, templates, logs, instructions). */
  serverVisible(server: string): boolean
  /** Built-in tools (server `mycelium`) visible now, with their wire names. */
  builtinTools(): readonly Tool[]
  /**
   * Runs a visible built-in tool by wire name; undefined when no such
   * built-in is visible. `ctx` is called only by a built-in that needs it
   * (every tools/call asks here first: a forwarded call builds nothing).
   */
  callBuiltin(
    wireName: string,
    args: Record<string, unknown>,
    ctx: () => BuiltinCallContext,
  ): Promise<CallToolResult> | undefined
  /** Registers a listener for changes of the view itself (escalation); returns an unsubscribe function. */
  onChange(listener: () => void): () => void
  /** myc's own skills this principal reaches (active or not), served over the Skills extension; undefined in open mode. */
  servedSkills?(): readonly ServedSkill[]
  /** Whether the principal may see a child's skills (its reachable skills grant that server, after deny). */
  childSkillsVisible?(server: string): boolean
  /** A value that changes whenever visibility changes; lists are cached by it. Undefined: never changes. */
  revision?(): unknown
  /** Who this principal is: the role and the active skills with their instructions; undefined in open mode. */
  describe?(): { role: string; activeSkills: Array<{ name: string; instructions: string }> }
  /** The skills this principal may use, with their triggers, whether each is active, and (where known) its instructions; undefined in open mode. */
  reachableSkills?(): Array<{ name: string; triggers: readonly string[]; active: boolean; instructions?: string }>
  /** Activates a skill as `actor` (escalation rules apply to the agent; `ask` asks through `ctx.elicit`); undefined in open mode. */
  activate?(name: string, actor: 'agent' | 'person', ctx?: BuiltinCallContext): Promise<CallToolResult>
  /** Deactivates a skill as `actor` (protected skills stay); undefined in open mode. */
  deactivate?(name: string, actor: 'agent' | 'person'): CallToolResult
  /** False: tools/list shows the built-ins only, and child tools stay callable by name (lazy open mode, `session.lazyTools`). */
  listsChildTools?: boolean
  /**
   * A built-in that stands for a call of another tool (lazy open mode's
   * `call_tool`): the call it stands for, or an error to answer; undefined
   * for any other name.
   */
  unwrapCall?(
    wireName: string,
    args: Record<string, unknown>,
  ): { name: string; arguments: Record<string, unknown> } | { error: string } | undefined
  /** Records a tool call for the audit log (name as sent, outcome, duration; never argument values; the run_code run it was made in). */
  recordCall?(call: {
    name: string
    outcome: 'ok' | 'error' | 'denied'
    durationMs: number
    argumentKeys: string[]
    runId?: string
    instance?: AuditInstance
  }): void
  /** Code mode: run_code and what it may call; absent when the session is not in code mode. */
  codeMode?: CodeModeHandle
  /**
   * The budget each inner call of a run_code run takes from, as a request of
   * its own would (a 2025 HTTP session's `http.rateLimit`): the refusal's
   * text when it is spent, else undefined. A 2026 request's is in its call
   * context instead (its view is its credential's, shared by its requests).
   */
  chargeInnerCall?(): Promise<string | undefined>
}

/** The open view's members: they hold no state, so every open view shares them (a view is made per session). */
const always = (): boolean => true
const noBuiltins = (): never[] => []
const noAnswer = (): undefined => undefined
const unsubscribed = (): void => {}
const neverChanges = (): (() => void) => unsubscribed

/**
 * Open mode (docs/policy.md): no policy, every child tool, prompt and
 * resource is served, and no built-in tool is.
 */
export function openView(): PrincipalView {
  return {
    toolVisible: always,
    promptVisible: always,
    serverVisible: always,
    builtinTools: noBuiltins,
    childSkillsVisible: always,
    callBuiltin: noAnswer,
    onChange: neverChanges,
  }
}
