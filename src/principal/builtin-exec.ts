import type { LoadedConfig } from '../config/load.js'
import { realpathSync, statSync } from 'node:fs'
import path from 'node:path'
import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { MyceliumConfig } from '../config/schema.js'
import type { Sandbox } from '../sandbox/sandbox.js'
import type { ExecRequest, ExecResult } from '../sandbox/types.js'
import type { Skill } from '../policy/skill-definition.js'

/** Definitions of the sandboxed built-ins (canonical names; the view renames them for the wire). */
export const EXEC_TOOL_DEFS: Record<'exec' | 'run_script', Omit<Tool, 'name'>> = {
  exec: {
    title: 'Run a shell command (sandboxed)',
    description:
      'Runs a shell command in the workspace inside the sandbox, behind the shell guard (destructive commands are refused). Returns the exit code, stdout and stderr.',
    inputSchema: {
      type: 'object',
      properties: { command: { type: 'string', description: 'A shell command line' } },
      required: ['command'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: true, openWorldHint: false },
  },
  run_script: {
    title: 'Run a skill script (sandboxed)',
    description: "Runs a script from an active skill's scripts/ folder with arguments, inside the sandbox.",
    inputSchema: {
      type: 'object',
      properties: {
        skill: { type: 'string' },
        script: { type: 'string', description: 'Path under the skill’s scripts/ folder, e.g. check.py' },
        args: { type: 'array', items: { type: 'string' } },
      },
      required: ['skill', 'script'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: true, openWorldHint: false },
  },
}

const INTERPRETER: Record<string, string> = {
  '.py': 'python3',
  '.sh': 'bash',
  '.js': 'node',
  '.mjs': 'node',
  '.cjs': 'node',
  '.rb': 'ruby',
  '.pl': 'perl',
}

/**
 * Runs the sandboxed built-ins for sessions, with the config's sandbox
 * settings, in `sandbox.workspace` (default the config's folder), with
 * myc's own state hidden from the command.
 */
export class BuiltinRunner {
  constructor(
    private readonly sandbox: Pick<Sandbox, 'run'>,
    private readonly config: MyceliumConfig,
    private readonly workspace: string,
    private readonly hiddenPaths: ExecRequest['hiddenPaths'],
    /** The person's home folder (default: HOME). */
    private readonly home?: string,
  ) {}

  private request(command: ExecRequest['command'], exposeFile?: string): ExecRequest {
    const s = this.config.sandbox
    return {
      command,
      trust: s.trust,
      executor: s.executor,
      workspace: this.workspace,
      ...(this.home !== undefined ? { home: this.home } : {}),
      timeoutMs: s.timeoutMs,
      outputLimitBytes: s.outputLimitBytes,
      network: s.network,
      hiddenPaths: this.hiddenPaths,
      readOnlyPaths: s.protect ?? [],
      ...(exposeFile ? { exposeFile } : {}),
      docker: s.docker,
    }
  }

  exec(command: string): Promise<CallToolResult> {
    return this.sandbox.run(this.request(command)).then(toResult)
  }

  /** A script of the (active) skill: its path must stay inside the skill's scripts/ folder, links resolved. */
  async runScript(skill: Skill, script: string, args: readonly string[]): Promise<CallToolResult> {
    const scripts = path.join(skill.dir, 'scripts')
    let file: string
    try {
      file = realpathSync(path.resolve(scripts, script))
      if (!file.startsWith(`${realpathSync(scripts)}${path.sep}`) || !statSync(file).isFile())
        throw new Error('outside')
    } catch {
      return {
        content: [
          { type: 'text', text: `Skill ${skill.name} has no script ${script} (scripts live in its scripts/ folder).` },
        ],
        isError: true,
      }
    }
    const interpreter = INTERPRETER[path.extname(file)]
    // The skill folders are hidden inside the sandbox; this one file is shown, read-only.
    return this.sandbox
      .run(this.request(interpreter ? [interpreter, file, ...args] : [file, ...args], file))
      .then(toResult)
  }
}

function toResult(result: ExecResult): CallToolResult {
  if (!result.ok)
    return {
      content: [{ type: 'text', text: result.error.message }],
      isError: true,
      structuredContent: { error: result.error },
    }
  const o = result.outcome
  const text = `exit code: ${o.exitCode ?? 'none'}${o.signal ? ` (signal ${o.signal})` : ''}${o.timedOut ? ' (timed out)' : ''}\n--- stdout ---\n${o.stdout}\n--- stderr ---\n${o.stderr}${(o.warnings ?? []).map((w) => `\nmyc: ${w}`).join('')}`
  return {
    content: [{ type: 'text', text }],
    structuredContent: {
      exitCode: o.exitCode,
      stdout: o.stdout,
      stderr: o.stderr,
      truncated: o.truncated,
      timedOut: o.timedOut,
      executor: o.executor,
    },
    ...(o.exitCode === 0 ? {} : { isError: true }),
  }
}

/**
 * The sandbox for `mycelium:exec` and `run_script`, loaded lazily (the shell
 * grammar is heavy): every state root of the config and of the person whose
 * environment `env` is (config/state-roots.ts) hidden.
 */
export async function createSandboxRunner(
  loaded: LoadedConfig,
  env: Record<string, string | undefined> = process.env,
): Promise<BuiltinRunner> {
  const [{ Sandbox }, { ShellGuard }, { ExecutorProbe }] = await Promise.all([
    import('../sandbox/sandbox.js'),
    import('../sandbox/guard/guard.js'),
    import('../sandbox/probe.js'),
  ])
  const { homeFolder, stateRoots } = await import('../config/state-roots.js')
  return new BuiltinRunner(
    new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() }),
    loaded.config,
    path.resolve(loaded.dir, loaded.config.sandbox.workspace ?? '.'),
    stateRoots(loaded, env),
    homeFolder(env),
  )
}
