import { readdirSync } from 'node:fs'
import path from 'node:path'
import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { Skill } from '../policy/skill-definition.js'
import type { BuiltinRunner } from '../principal/builtin-exec.js'
import { unknownTool } from '../runtime/principal-tools.js'
import { randomUUID } from 'node:crypto'
import { innerAnswer } from '../code/code-result.js'
import { runWith, type CodeRuns } from '../code/code-runner.js'
import type { ToolTable } from '../code/protocol.js'
import { runCodeDef } from '../principal/code-view.js'
import type { InnerCalls, OfferedTool, Reached, ToolCall, ToolSource } from './tool-call.js'

/** A script that failed: what the context file records. */
export interface ScriptFailure {
  skill: string
  script: string
  args: string[]
  exitCode: number | null
  stdout: string
  stderr: string
}

const text = (t: string, isError = false): CallToolResult => ({
  content: [{ type: 'text', text: t }],
  ...(isError ? { isError: true } : {}),
})

function scriptsOf(skill: Skill): string[] {
  try {
    return readdirSync(path.join(skill.dir, 'scripts'), { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort()
  } catch {
    return []
  }
}

/**
 * The workflow's tools, and only these: list the skills the role reaches,
 * read one, and run one of the scripts such a skill ships (in the sandbox,
 * behind the guard). The first script that fails is kept (`failure`): the
 * workflow ends there and `--on-failure` decides what follows.
 */
export class WorkflowToolbox implements ToolSource {
  failure: ScriptFailure | undefined
  private readonly tools: OfferedTool[]
  private readonly byWire = new Map<string, 'list_skills' | 'read_skill' | 'run_script' | 'run_code'>()

  /** `code`: code mode (the role's codeMode, else agent.codeMode): run_code too, whose code calls these tools. */
  constructor(
    private readonly skills: readonly Skill[],
    private readonly runner: Pick<BuiltinRunner, 'runScript'>,
    separator: string,
    private readonly code?: CodeRuns,
  ) {
    const skillArg = {
      type: 'object',
      properties: { name: { type: 'string', description: 'The skill, as list_skills names it' } },
      required: ['name'],
    } as Tool['inputSchema']
    const defs: Array<
      [name: 'list_skills' | 'read_skill' | 'run_script', description: string, schema: Tool['inputSchema']]
    > = [
      [
        'list_skills',
        'The skills you may run, with their descriptions and scripts.',
        { type: 'object', properties: {} },
      ],
      ['read_skill', "A skill's instructions and the scripts it ships.", skillArg],
      [
        'run_script',
        "Runs one of a skill's scripts in the sandbox. A script that fails ends the workflow.",
        {
          type: 'object',
          properties: {
            skill: { type: 'string' },
            script: { type: 'string', description: "A file name from the skill's scripts" },
            args: { type: 'array', items: { type: 'string' } },
          },
          required: ['skill', 'script'],
        },
      ],
    ]
    this.tools = defs.map(([name, description, inputSchema]) => {
      const wireName = `mycelium${separator}${name}`
      this.byWire.set(wireName, name)
      return { wireName, id: `mycelium:${name}`, def: { name: wireName, description, inputSchema } }
    })
    if (code) {
      const wireName = `mycelium${separator}run_code`
      this.byWire.set(wireName, 'run_code')
      const calls =
        '`await tools.mycelium.run_script({ skill, script, args })` (and `list_skills()`, `read_skill({ name })`)'
      this.tools.push({ wireName, id: 'mycelium:run_code', def: { name: wireName, ...runCodeDef(code, calls) } })
    }
  }

  list(): readonly OfferedTool[] {
    return this.tools
  }

  reach(wireName: string, args: Record<string, unknown>): Reached | undefined {
    const tool = this.tools.find((t) => t.wireName === wireName)
    return tool && { tool, target: { tool, input: args } }
  }

  async ungated(call: ToolCall, target: OfferedTool | undefined, _meta: unknown, inner: InnerCalls) {
    const { wireName, args } = call
    const which = target?.wireName === wireName ? this.byWire.get(wireName) : undefined
    if (!which) return unknownTool(wireName) as { ok: false; error: { code: number; message: string } }
    if (which === 'run_code') return { ok: true as const, result: await this.runCode(call, inner) }
    const skill = (name: unknown) => this.skills.find((s) => s.name === name)
    if (which === 'list_skills') {
      return {
        ok: true as const,
        result: text(
          this.skills
            .map(
              (s) =>
                `- ${s.name}: ${s.description}${scriptsOf(s).length ? ` (scripts: ${scriptsOf(s).join(', ')})` : ''}`,
            )
            .join('\n') || 'No skills.',
        ),
      }
    }
    const found = skill(which === 'read_skill' ? args.name : args.skill)
    if (!found)
      return {
        ok: true as const,
        result: text(
          `Unknown skill: ${String(which === 'read_skill' ? args.name : args.skill)}. Call list_skills to see the skills you may run.`,
          true,
        ),
      }
    if (which === 'read_skill')
      return {
        ok: true as const,
        result: text(
          `${found.instructions || '(no instructions)'}\n\nscripts: ${scriptsOf(found).join(', ') || 'none'}`,
        ),
      }
    // The first failure ended the workflow: a later script (another in the same reply, or in the same run) does not run.
    if (this.failure)
      return {
        ok: true as const,
        result: text(`The workflow ended: script ${this.failure.script} of skill ${this.failure.skill} failed.`, true),
      }
    const script = String(args.script ?? '')
    const scriptArgs = Array.isArray(args.args) ? args.args.map(String) : []
    const result = await this.runner.runScript(found, script, scriptArgs)
    // A script that ran and failed, or that the sandbox refused, ends the workflow; a script that does not exist is the model's mistake to fix.
    if (result.isError && result.structuredContent !== undefined) {
      const s = result.structuredContent as { exitCode?: number | null; stdout?: string; stderr?: string }
      this.failure ??= {
        skill: found.name,
        script,
        args: scriptArgs,
        exitCode: s.exitCode ?? null,
        stdout: s.stdout ?? '',
        stderr: s.stderr ?? (result.content[0] as { text?: string } | undefined)?.text ?? '',
      }
    }
    return { ok: true as const, result }
  }

  /**
   * run_code (code mode): the code sees `tools.mycelium` with this toolbox's
   * other tools, and each of its calls comes back through the door (`inner`)
   * as a call of its own.
   */
  private async runCode(call: ToolCall, inner: InnerCalls): Promise<CallToolResult> {
    const code = this.code!
    if (call.runId !== undefined) return text(`${call.wireName} cannot run inside a run: call the tools directly`, true)
    if (typeof call.args.code !== 'string' || call.args.code.trim() === '')
      return text(
        `${call.wireName} needs "code": the body of an async function, such as return await tools.mycelium.list_skills()`,
        true,
      )
    const runId = randomUUID()
    const table: ToolTable = [
      [
        'mycelium',
        this.tools.filter((t) => t.wireName !== call.wireName).map((t) => [t.id.slice('mycelium:'.length), t.wireName]),
      ],
    ]
    return runWith(
      code,
      call.args.code,
      {
        tools: () => table,
        onChange: () => () => {},
        call: async (name, args, cancellation) =>
          innerAnswer(await inner({ wireName: name, args, cancellation, runId })),
      },
      call.cancellation,
    )
  }
}
