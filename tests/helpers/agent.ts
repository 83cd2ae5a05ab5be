import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { loadAnthropicSdk } from '../../src/agent/anthropic-sdk.js'
import { runAgent, type AgentOptions, type AgentOutcome } from '../../src/agent/engine.js'
import type { AgentEvent, AgentEventBody } from '../../src/agent/events.js'
import type { ToolDoor } from '../../src/agent/tool-call.js'
import { runCli } from '../../src/cli.js'
import { testEnv, testIO } from './cli.js'
import { bundle, requireBundle } from './e2e.js'
import type { FakeAnthropic, FakeReply } from './fake-anthropic.js'
import { fixtureEntry } from './runtime.js'

export interface AgentRun {
  code: number | null
  stdout: string
  stderr: string
  /** With --json: every line of stdout, parsed. */
  events: AgentEvent[]
}

/**
 * Runs `node build/myc.cjs <args>` (run, adhoc, workflow) against the fake
 * Messages API, asynchronously: the fake answers from this process. The key
 * is set unless `env` says otherwise; variables set to undefined are removed.
 */
export function runAgentCli(
  args: string[],
  options: {
    env?: Record<string, string | undefined>
    input?: string
    fake?: FakeAnthropic
    onStdout?: (text: string, child: ReturnType<typeof spawn>) => void
  } = {},
): Promise<AgentRun> {
  requireBundle()
  const env = testEnv(agentEnv(options))
  const child = spawn(process.execPath, [bundle, ...args], { env, stdio: 'pipe' })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8')
    options.onStdout?.(stdout, child)
  })
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
  child.stdin.end(options.input ?? '')
  return new Promise((resolve) => {
    child.on('close', (code) => resolve({ code, stdout, stderr, events: eventsOf(args, stdout) }))
  })
}

/** The agent's variables for a run against `fake`: the key set, the others the caller's, undefined ones removed. */
function agentEnv(options: { env?: Record<string, string | undefined>; fake?: FakeAnthropic }) {
  return {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: options.fake?.url,
    ANTHROPIC_AUTH_TOKEN: undefined,
    ANTHROPIC_MODEL: undefined,
    ...options.env,
  }
}

/** JSON Lines from the agent commands; other commands' --json (pretty documents) are left in stdout. */
function eventsOf(args: string[], stdout: string): AgentEvent[] {
  return args.includes('--json') && ['run', 'adhoc', 'workflow'].includes(args[0]!)
    ? stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AgentEvent)
    : []
}

/**
 * {@link runAgentCli} in this process (tests/helpers/cli.ts): the same
 * environment and result, no bundle spawned. `onStdout` gets what stdout
 * has so far and a `signal` function that sends SIGINT or SIGTERM to the
 * run (through its io, not to any process).
 */
export async function runAgentHere(
  args: string[],
  options: {
    env?: Record<string, string | undefined>
    input?: string
    fake?: FakeAnthropic
    cwd?: string
    onStdout?: (text: string, signal: (name: NodeJS.Signals) => void) => void
  } = {},
): Promise<AgentRun & { code: number }> {
  const { io, stdout, stderr, signals } = testIO({
    env: agentEnv(options),
    input: options.input ?? '',
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  })
  const signal = (name: NodeJS.Signals) => void signals.emit(name, name)
  if (options.onStdout) stdout.onText((text) => options.onStdout!(text, signal))
  const code = await runCli(args, io)
  return { code, stdout: stdout.text, stderr: stderr.text, events: eventsOf(args, stdout.text) }
}

/**
 * A policy-mode project: one skill per entry of `skills` (its tools), each
 * for the adhoc role, the echo fixture as the one server, an audit log;
 * `extra` joins the config's top level.
 */
export function adhocProject(
  skills: Record<string, string[]>,
  extra: Record<string, unknown> = {},
): { dir: string; config: string; audit: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-adhoc-'))
  for (const [name, tools] of Object.entries(skills)) {
    mkdirSync(path.join(dir, 'skills', name), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: The ${name} tools\nallowedRoles: [adhoc]\nallowedTools: ${JSON.stringify(tools)}\n---\n`,
    )
  }
  const audit = path.join(dir, 'audit.jsonl')
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    config,
    JSON.stringify({ mcpServers: { echo: fixtureEntry('echo') }, audit: { file: audit }, ...extra }),
  )
  return { dir, config, audit }
}

/**
 * A policy-mode project for the adhoc role whose skills start inactive:
 * `safe` (echo:echo, low risk), `danger` (echo:add, high by a risk rule) and
 * `shell` (mycelium:exec, critical).
 */
export function skillsProject(): { dir: string; config: string; audit: string } {
  return adhocProject(
    { safe: ['echo:echo'], danger: ['echo:add'], shell: ['mycelium:exec'] },
    { agent: { risk: [{ pattern: 'echo:add', level: 'high' }] } },
  )
}

/** A policy-mode project whose adhoc role reaches every echo tool (skill `investigate`, on from the start); echo:add is high risk, echo:fail critical. */
export function investigateProject(): { dir: string; config: string; audit: string } {
  return adhocProject(
    { investigate: ['echo:*'] },
    {
      session: { defaultSkills: ['investigate'] },
      agent: {
        risk: [
          { pattern: 'echo:add', level: 'high' },
          { pattern: 'echo:fail', level: 'critical' },
        ],
      },
    },
  )
}

/** The tools a project's audit log says were called and reached their handler or child (a refused or unknown call is not one). */
export function toolsThatRan(audit: string): string[] {
  if (!existsSync(audit)) return []
  return readFileSync(audit, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; tool?: string; outcome?: string })
    .filter((e) => e.event === 'tool_call' && e.outcome !== 'denied')
    .map((e) => e.tool!)
}

/**
 * The model's replies that activate a skill and call its tool in the same
 * reply: danger with echo:add, shell with mycelium:exec (touching `mark`),
 * safe with echo:echo; then it says it is done.
 */
export function activateAndCall(mark: string): FakeReply[] {
  const activate = (name: string) => ({ type: 'tool_use', name: 'mycelium__activate_skill', input: { name } }) as const
  return [
    { content: [activate('danger'), { type: 'tool_use', name: 'echo__add', input: { a: 1, b: 2 } }] },
    { content: [activate('shell'), { type: 'tool_use', name: 'mycelium__exec', input: { command: `touch ${mark}` } }] },
    { content: [activate('safe'), { type: 'tool_use', name: 'echo__echo', input: { message: 'at once' } }] },
    { content: [{ type: 'text', text: 'All done.' }] },
  ]
}

/**
 * The agent loop in this process against the fake Messages API (task "go",
 * model claude-test, up to 6 turns of 1024 tokens; `more` overrides), on
 * `tools`: how it ended, and every event it emitted (also into `events`).
 */
export async function agentInProcess(
  fake: FakeAnthropic,
  tools: ToolDoor,
  more: Partial<AgentOptions> = {},
  events: AgentEventBody[] = [],
): Promise<{ outcome: AgentOutcome; events: AgentEventBody[] }> {
  const sdk = await loadAnthropicSdk()
  const outcome = await runAgent('go', {
    client: new sdk.Anthropic({ apiKey: 'test', baseURL: fake.url }),
    sdk,
    model: 'claude-test',
    maxTokens: 1024,
    maxTurns: 6,
    system: 'test',
    tools,
    emit: (e) => events.push(e),
    ...more,
  })
  return { outcome, events }
}

/** The events of one type, typed as that type. */
export const ofType = <T extends AgentEventBody['type']>(events: AgentEventBody[], type: T) =>
  events.filter((e): e is Extract<AgentEventBody, { type: T }> => e.type === type)

/**
 * A project whose `deploy` skill ships a script that works and one that
 * fails; the adhoc role reaches echo. With `danger`, the adhoc role's
 * default skill has echo:echo only, and its skill `danger` (off) has
 * echo:add, high risk. With `echo: false`, for a case that reads no tool of
 * echo: no server (a run starts every server of its config), and the adhoc
 * role's skill allows nothing.
 */
export function workflowProject(options: { danger?: boolean; codeMode?: boolean; echo?: boolean } = {}): string {
  const echo = options.echo ?? true
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-wf-'))
  const skill = (name: string, roles: string, tools: string) => {
    mkdirSync(path.join(dir, 'skills', name, 'scripts'), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: The ${name} skill\nallowedRoles: [${roles}]\nallowedTools: ${tools}\n---\nRun check.sh first, then release.sh.\n`,
    )
  }
  skill('deploy', 'ops', '[]')
  skill('investigate', 'adhoc', !echo ? '[]' : options.danger ? '["echo:echo"]' : '["echo:*"]')
  if (options.danger) skill('danger', 'adhoc', '["echo:add"]')
  const script = (name: string, body: string) => {
    const file = path.join(dir, 'skills', 'deploy', 'scripts', name)
    writeFileSync(file, `#!/bin/sh\n${body}\n`)
    chmodSync(file, 0o755)
  }
  script('check.sh', 'echo all good')
  script('release.sh', 'echo releasing; echo "disk full" >&2; exit 2')
  writeFileSync(
    path.join(dir, 'mycelium.config.json'),
    JSON.stringify({
      mcpServers: echo ? { echo: fixtureEntry('echo') } : {},
      roles: { default: 'ops' },
      session: { defaultSkills: ['investigate'] },
      agent: {
        ...(options.danger ? { risk: [{ pattern: 'echo:add', level: 'high' }] } : {}),
        ...(options.codeMode ? { codeMode: true } : {}),
      },
    }),
  )
  return path.join(dir, 'mycelium.config.json')
}

/** The workflow's model runs check.sh, then release.sh (which fails); `adhoc` is what the model says after a hand-off. */
export function failingWorkflow(
  fake: FakeAnthropic,
  adhoc: FakeReply[] = [{ content: [{ type: 'text', text: 'Looking into the failure.' }] }],
): void {
  fake.setScript(
    (_req, i) =>
      [
        {
          content: [
            { type: 'text' as const, text: 'Checking first.' },
            {
              type: 'tool_use' as const,
              name: 'mycelium__run_script',
              input: { skill: 'deploy', script: 'check.sh' },
            },
          ],
        },
        {
          content: [
            {
              type: 'tool_use' as const,
              name: 'mycelium__run_script',
              input: { skill: 'deploy', script: 'release.sh', args: ['--now'] },
            },
          ],
        },
        ...adhoc,
      ][i]!,
  )
}
