import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import * as v from 'valibot'
import { MycError } from '../errors.js'

/** Each of stdout and stderr is kept to this many characters (the end, where errors are). */
export const CONTEXT_OUTPUT_CAP = 16_384

/**
 * What a failed workflow script leaves for `myc adhoc --context FILE`: one
 * schema, written by the workflow and validated when read.
 */
export const FailureContextSchema = v.strictObject({
  version: v.literal(1),
  skillId: v.pipe(v.string(), v.minLength(1)),
  scriptPath: v.string(),
  args: v.array(v.string()),
  exitCode: v.nullable(v.number()),
  stdout: v.string(),
  stderr: v.string(),
  conversationSummary: v.string(),
  /** ISO 8601. */
  timestamp: v.pipe(v.string(), v.isoTimestamp()),
})
export type FailureContext = v.InferOutput<typeof FailureContextSchema>

function tail(text: string): string {
  return text.length <= CONTEXT_OUTPUT_CAP
    ? text
    : `[… ${text.length - CONTEXT_OUTPUT_CAP} characters cut …]\n${text.slice(-CONTEXT_OUTPUT_CAP)}`
}

/** Writes a context file in `folder` (the project's `.mycelium/context/`: config/state-roots.ts); resolves with its path. */
export async function writeFailureContext(
  folder: string,
  context: Omit<FailureContext, 'version' | 'timestamp'>,
  now = new Date(),
): Promise<string> {
  const record: FailureContext = {
    version: 1,
    ...context,
    stdout: tail(context.stdout),
    stderr: tail(context.stderr),
    timestamp: now.toISOString(),
  }
  await mkdir(folder, { recursive: true })
  const file = path.join(
    folder,
    `${record.timestamp.replace(/[:.]/g, '-')}-${context.skillId.replace(/[^a-z0-9-]/g, '_')}.json`,
  )
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`)
  return file
}

/** Reads and validates a context file; a bad one is a usage error naming the file, the field and the fix. */
export async function readFailureContext(file: string): Promise<FailureContext> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new MycError('usage', `--context: cannot read ${file}: ${(error as Error).message}`)
  }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw new MycError(
      'usage',
      `--context: ${file} is not JSON (${(error as Error).message}); pass the file a failed \`myc workflow\` wrote under .mycelium/context/`,
    )
  }
  const parsed = v.safeParse(FailureContextSchema, raw)
  if (!parsed.success) {
    const issue = parsed.issues[0]
    const key = (issue.path ?? []).map((p) => String(p.key)).join('.') || '(top level)'
    throw new MycError(
      'usage',
      `--context: ${file}: ${key}: ${issue.message} (a context file has version 1, skillId, scriptPath, args, exitCode, stdout, stderr, conversationSummary, timestamp)`,
    )
  }
  return parsed.output
}

/** How many of a failed script's last stderr lines a person is shown before being asked to hand off. */
export const STDERR_TAIL_LINES = 12

/**
 * A failed script as a person reads it before deciding to hand off: the
 * script and its arguments, its exit code, and the last lines of its stderr
 * (plain text: the caller passes it through terminalText).
 */
export function failureSummary(failure: {
  skill: string
  script: string
  args: readonly string[]
  exitCode: number | null
  stderr: string
}): string {
  const lines = failure.stderr.replace(/\s+$/, '').split('\n')
  const tailLines = failure.stderr.trim() === '' ? [] : lines.slice(-STDERR_TAIL_LINES)
  const cut = lines.length - tailLines.length
  return [
    `myc: script scripts/${failure.script}${failure.args.length ? ` ${failure.args.join(' ')}` : ''} of skill ${failure.skill} failed: ${failure.exitCode === null ? 'no exit code (ended by a signal or the time limit)' : `exit code ${failure.exitCode}`}`,
    tailLines.length === 0
      ? '  (its stderr is empty)'
      : `  its stderr${cut > 0 ? ` (the last ${tailLines.length} of ${lines.length} lines)` : ''}:`,
    ...tailLines.map((l) => `  | ${l}`),
  ].join('\n')
}

/** The context as a section of adhoc's system prompt. */
export function contextPrompt(context: FailureContext): string {
  return [
    '## A workflow failed: find out why and fix it',
    `Skill ${context.skillId} ran ${context.scriptPath}${context.args.length ? ` ${context.args.join(' ')}` : ''} and it exited with ${context.exitCode ?? 'no code'} at ${context.timestamp}.`,
    `What the workflow had done: ${context.conversationSummary || '(nothing recorded)'}`,
    `stdout:\n${context.stdout || '(empty)'}`,
    `stderr:\n${context.stderr || '(empty)'}`,
  ].join('\n\n')
}
