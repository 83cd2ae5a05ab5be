import * as v from 'valibot'

/**
 * The events of an agent run, as `myc run --json` prints them (JSON Lines on
 * stdout, one object per event). Event names are snake_case; fields are
 * camelCase like every other `--json` output. The valibot schemas are the
 * contract: `myc run --json-schema` prints their JSON Schema, and tests
 * validate every event of a run against them.
 */

const common = {
  /** 1, 2, 3… in the order written. */
  seq: v.pipe(v.number(), v.integer(), v.minValue(1)),
  /** ISO 8601. */
  time: v.pipe(v.string(), v.isoTimestamp()),
  sessionId: v.string(),
  /** Set on what a worker did (its text, tool calls and results…): the parent's `mycelium__delegate` call id (worker_start's parentId). Absent: the agent itself. */
  worker: v.optional(v.string()),
}

/** Set on a call the code of a run_code call made (docs/code-mode.md): that run_code call's id. Absent: the model's own call. */
const inner = v.optional(v.string())

const Usage = v.strictObject({
  inputTokens: v.number(),
  outputTokens: v.number(),
  cacheReadInputTokens: v.number(),
  cacheCreationInputTokens: v.number(),
})

/**
 * budget: the next request would have passed a cap (src/agent/budget.ts); exit 3.
 * unavailable: a tool call failed because its server was not running (crashed, restarting, failed), and no later call of that tool made it good; exit 1.
 */
const EndReasons = ['done', 'max_turns', 'failed', 'denied', 'interrupted', 'error', 'budget', 'unavailable'] as const

export const AgentEventSchema = v.variant('type', [
  v.strictObject({
    type: v.literal('session_start'),
    ...common,
    role: v.nullable(v.string()),
    mode: v.picklist(['run', 'workflow', 'adhoc']),
    model: v.string(),
    /** The tools offered on the first request, as `server:tool`. */
    tools: v.array(v.string()),
    activeSkills: v.array(v.string()),
    version: v.string(),
    /** The run's OpenTelemetry trace id, when tracing is on: a CI log links to the trace. */
    traceId: v.optional(v.string()),
    /** Estimated tokens of the first request's context: the system prompt and the tools offered (JSON characters / 4, as `myc tokens`). */
    contextTokens: v.optional(v.number()),
  }),
  v.strictObject({ type: v.literal('text'), ...common, text: v.string() }),
  v.strictObject({ type: v.literal('text_delta'), ...common, text: v.string() }),
  v.strictObject({
    type: v.literal('tool_call'),
    ...common,
    id: v.string(),
    tool: v.string(),
    input: v.unknown(),
    parentId: inner,
  }),
  v.strictObject({
    type: v.literal('tool_result'),
    ...common,
    id: v.string(),
    tool: v.string(),
    parentId: inner,
    ok: v.boolean(),
    durationMs: v.number(),
    /** The MCP content the tool returned (or the error the model was given). */
    content: v.array(v.unknown()),
  }),
  v.strictObject({
    type: v.picklist(['skill_activated', 'skill_deactivated']),
    ...common,
    skill: v.string(),
    by: v.picklist(['model', 'trigger', 'classifier', 'user']),
    toolsAdded: v.array(v.string()),
    toolsRemoved: v.array(v.string()),
  }),
  v.strictObject({
    type: v.literal('approval_requested'),
    ...common,
    id: v.string(),
    tool: v.string(),
    risk: v.picklist(['low', 'medium', 'high', 'critical']),
  }),
  v.strictObject({
    type: v.literal('approval_decided'),
    ...common,
    id: v.string(),
    tool: v.string(),
    risk: v.picklist(['low', 'medium', 'high', 'critical']),
    decision: v.picklist(['allow', 'deny']),
    /** user (asked on the terminal), session (an earlier always/never), preapproved (--approve), no_terminal (nobody to ask). */
    by: v.picklist(['user', 'session', 'preapproved', 'no_terminal']),
    reason: v.string(),
  }),
  v.strictObject({
    type: v.literal('guard_blocked'),
    ...common,
    /** The tool call the shell guard stopped. */
    id: v.string(),
    tool: v.string(),
    rule: v.string(),
    message: v.string(),
  }),
  v.strictObject({
    type: v.literal('worker_start'),
    ...common,
    /** The parent's tool call that started the worker. */
    parentId: v.string(),
    skill: v.string(),
    task: v.string(),
    tools: v.array(v.string()),
  }),
  v.strictObject({
    type: v.literal('worker_end'),
    ...common,
    parentId: v.string(),
    skill: v.string(),
    ok: v.boolean(),
    reason: v.picklist(EndReasons),
    turns: v.number(),
    text: v.string(),
  }),
  v.strictObject({
    type: v.literal('handoff'),
    ...common,
    /** The failure context the next mode starts from. */
    contextFile: v.string(),
    to: v.literal('adhoc'),
  }),
  v.strictObject({ type: v.literal('error'), ...common, code: v.string(), message: v.string() }),
  v.strictObject({
    type: v.literal('session_end'),
    ...common,
    ok: v.boolean(),
    reason: v.picklist(EndReasons),
    turns: v.number(),
    /** Summed over the API calls of the run, each counted once. */
    usage: Usage,
    /** When the model's price is known. */
    costUsd: v.optional(v.number()),
    durationMs: v.number(),
    /** The last text the model wrote. */
    text: v.string(),
    exitCode: v.number(),
    /** A workflow that failed: the context file it wrote (for `myc adhoc --context`). */
    contextFile: v.optional(v.string()),
    /** Tool calls that were refused (hidden or unknown tools, denied approvals). */
    permissionDenials: v.array(v.strictObject({ tool: v.string(), id: v.string(), reason: v.string() })),
    /** The run's OpenTelemetry trace id, when tracing is on. */
    traceId: v.optional(v.string()),
  }),
])

export type AgentEvent = v.InferOutput<typeof AgentEventSchema>
export type EndReason = (typeof EndReasons)[number]
export type TokenUsage = v.InferOutput<typeof Usage>

/** An event before the stream stamps it (seq, time, session id). */
export type AgentEventBody = AgentEvent extends infer E
  ? E extends AgentEvent
    ? Omit<E, 'seq' | 'time' | 'sessionId'>
    : never
  : never

/** The JSON Schema of one event (draft-07), what `myc run --json-schema` prints. */
export async function agentEventsJsonSchema(): Promise<Record<string, unknown>> {
  const { toJsonSchema } = await import('@valibot/to-json-schema')
  return {
    title: 'myc run --json: one event per line',
    ...(toJsonSchema(AgentEventSchema, { target: 'draft-07', errorMode: 'ignore' }) as Record<string, unknown>),
  }
}
