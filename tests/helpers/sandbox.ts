import { spawnSync } from 'node:child_process'
import { ExecutorProbe } from '../../src/sandbox/probe.js'
import { Sandbox, type SandboxDeps } from '../../src/sandbox/sandbox.js'
import type { ExecOutcome, ExecRequest } from '../../src/sandbox/types.js'
import { requireTool } from './tools.js'

/** Whether real bubblewrap runs here (see requireTool). */
export const hasBwrap = requireTool(
  'bwrap',
  process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0,
)

/** What a Sandbox whose shell guard allows everything is made of: the sandbox alone must hold in a probe. */
export const unguardedDeps: SandboxDeps = {
  guard: { check: async () => ({ ok: true as const, commands: 1 }) },
  probe: new ExecutorProbe(),
}

export function unguardedSandbox(): Sandbox {
  return new Sandbox(unguardedDeps)
}

/** Runs `command` in `workspace` under real bubblewrap (sandboxed unless `extra` says otherwise); throws on a refusal. */
export async function runInBwrap(
  sandbox: Pick<Sandbox, 'run'>,
  workspace: string,
  command: ExecRequest['command'],
  extra: Partial<ExecRequest> = {},
): Promise<ExecOutcome> {
  const r = await sandbox.run({
    command,
    trust: 'sandboxed',
    executor: 'bubblewrap',
    workspace,
    timeoutMs: 10_000,
    outputLimitBytes: 100_000,
    network: { allow: [] },
    ...extra,
  })
  if (!r.ok) throw new Error(r.error.message)
  return r.outcome
}
