import { readdirSync } from 'node:fs'
import path from 'node:path'
import type { CallToolResult, Tool } from '@modelcontextprotocol/client'
import type { Skill } from '../policy/skill.js'
import type { BuiltinRunner } from '../principal/builtin-exec.js'
import { unknownTool } from '../runtime/principal-tools.js'
import type { OfferedTool, Reached, ToolCall, ToolSource } from './tool-call.js'

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
  private readonly byWire = new Map<string, 'list_skills' | 'read_skill' | 'run_script'>()

  constructor(
    private readonly skills: readonly Skill[],
    private readonly runner: Pick<BuiltinRunner, 'runScript'>,
    separator: string,
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
  }

  list(): readonly OfferedTool[] {
    return this.tools
  }

  reach(wireName: string, args: Record<string, unknown>): Reached | undefined {
    const tool = this.tools.find((t) => t.wireName === wireName)
    return tool && { tool, target: { tool, input: args } }
  }

  async ungated({ wireName, args }: ToolCall, target: OfferedTool | undefined) {
    const which = target?.wireName === wireName ? this.byWire.get(wireName) : undefined
    if (!which) return unknownTool(wireName) as { ok: false; error: { code: number; message: string } }
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
}
