import { spawn } from 'node:child_process'
import type { AgentEvent } from '../../src/agent/events.js'
import { bundle, requireBundle } from './e2e.js'
import type { FakeAnthropic } from './fake-anthropic.js'

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
  const env: Record<string, string | undefined> = {
    ...process.env,
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_BASE_URL: options.fake?.url,
    ANTHROPIC_AUTH_TOKEN: undefined,
    ANTHROPIC_MODEL: undefined,
    ...options.env,
  }
  for (const [k, value] of Object.entries(env)) if (value === undefined) delete env[k]
  const child = spawn(process.execPath, [bundle, ...args], { env: env as NodeJS.ProcessEnv, stdio: 'pipe' })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString('utf8')
    options.onStdout?.(stdout, child)
  })
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')))
  child.stdin.end(options.input ?? '')
  return new Promise((resolve) => {
    child.on('close', (code) => {
      // JSON Lines from the agent commands; other commands' --json (pretty documents) are left in stdout.
      const events =
        args.includes('--json') && ['run', 'adhoc', 'workflow'].includes(args[0]!)
          ? stdout
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l) as AgentEvent)
          : []
      resolve({ code, stdout, stderr, events })
    })
  })
}
