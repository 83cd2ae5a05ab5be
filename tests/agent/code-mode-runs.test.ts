import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAnthropicSdk, type AnthropicSdk } from '../../src/agent/anthropic-sdk.js'
import { Budget } from '../../src/agent/budget.js'
import { agentCapabilities, modelSampler, workingDirectoryRoots } from '../../src/agent/child-questions.js'
import type { AgentOptions } from '../../src/agent/engine.js'
import { roleTools } from '../../src/agent/role-tools.js'
import { startRunSpan } from '../../src/agent/run-span.js'
import { ToolDoor } from '../../src/agent/tool-call.js'
import { WorkflowToolbox } from '../../src/agent/workflow-toolbox.js'
import type { CodeRunner } from '../../src/code/code-runner.js'
import { loadConfig } from '../../src/config/load.js'
import { createLogger } from '../../src/logger.js'
import { createSandboxRunner } from '../../src/principal/builtin-exec.js'
import { createView } from '../../src/principal/policy-mode.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { openTracing } from '../../src/telemetry/open-tracing.js'
import type { Tracing } from '../../src/telemetry/tracing.js'
import { agentInProcess, ofType } from '../helpers/agent.js'
import { hasBwrap, testCodeRunner } from '../helpers/code-mode.js'
import { FakeAnthropic, type FakeBlock, type RecordedRequest } from '../helpers/fake-anthropic.js'
import { OtlpReceiver } from '../helpers/otlp-receiver.js'
import { fixtureEntry, loadedConfig, PolicyHarness } from '../helpers/runtime.js'
import { waitFor } from '../helpers/wait-for.js'
import { childSessions } from '../../src/eras/child-sessions.js'

/**
 * Code mode for the agent, the rest of issue 37's item 6: the inner calls of
 * a run count against the run's budget as the model's own calls do (what a
 * child asks the model during one is a request of the run), are execute_tool
 * spans under the run's span, and a workflow offers run_code over its
 * scripts. Real runtimes, the real runner under bubblewrap, a real OTLP
 * receiver, a fake Messages API.
 */

const fake = new FakeAnthropic()
let sdk: AnthropicSdk
const logger = createLogger({ quiet: true })
beforeAll(async () => {
  await fake.start()
  sdk = await loadAnthropicSdk()
})
afterAll(() => fake.close())

const runCode = (code: string): FakeBlock => ({ type: 'tool_use', name: 'mycelium__run_code', input: { code } })
const client = () => new sdk.Anthropic({ apiKey: 'test', baseURL: fake.url })

const agent = (tools: ToolDoor, more: Partial<AgentOptions> = {}) =>
  agentInProcess(fake, tools, { maxTokens: 20, maxTurns: 4, ...more })

/** An open-mode runtime of `servers` whose agent is in code mode, offering its children what the agent answers; started. */
async function codeRuntime(
  servers: Record<string, unknown>,
  budget: Budget,
  tracing?: Tracing,
): Promise<{ runtime: Runtime; tools: ToolDoor }> {
  const loaded = loadedConfig({ mcpServers: servers, agent: { codeMode: true } })
  const runtime = new Runtime({
    loaded,
    childSessions,
    logger,
    version: 'test',
    host: hostForThisProcess(),
    ...(tracing ? { tracing } : {}),
  })
  const answers = {
    sample: modelSampler(client(), 'claude-test', 20, () => {}, undefined, budget),
    roots: workingDirectoryRoots(process.cwd()),
  }
  runtime.offerClientCapabilities(agentCapabilities(answers))
  await runtime.start()
  const codeRunner: CodeRunner = await testCodeRunner(loaded)
  const view = createView({ kind: 'open' }, loaded, {
    env: {},
    catalogue: runtime.catalogue,
    logger,
    face: 'agent',
    codeRunner,
  })
  return { runtime, tools: roleTools({ runtime, view, answers }).tools }
}

describe.runIf(hasBwrap)('code mode: what a child asks the model during an inner call is a request of the run', () => {
  const sampling: RecordedRequest[] = []
  /** The model calls run_code once, whose code asks the `asker` child to sample; then it ends. Each turn uses `turnUsage`. */
  const script = (turnUsage: { input_tokens: number; output_tokens: number }) =>
    fake.setScript((request, i) => {
      if (request.body.stream !== true) {
        sampling.push(request)
        return {
          content: [{ type: 'text', text: 'hi from the model' }],
          usage: { input_tokens: 100, output_tokens: 7 },
        }
      }
      return i === 0
        ? { content: [runCode('return await tools.asker.sample({})')], usage: turnUsage }
        : { content: [{ type: 'text', text: 'done' }], usage: turnUsage }
    })

  it('counts in the budget, as during a direct call', async () => {
    const budget = new Budget(undefined, 'raise it')
    const { runtime, tools } = await codeRuntime({ asker: fixtureEntry('elicit') }, budget)
    try {
      script({ input_tokens: 10, output_tokens: 5 })
      sampling.length = 0
      const { outcome, events } = await agent(tools, { budget })
      expect(outcome.reason).toBe('done')
      expect(sampling).toHaveLength(1)
      expect(JSON.stringify(ofType(events, 'tool_result').at(-1)!.content)).toContain('hi from the model')
      // Two turns of the agent (10 in, 5 out each) and the child's sampling (100 in, 7 out).
      expect(budget.spent).toMatchObject({ inputTokens: 120, outputTokens: 17 })
    } finally {
      await runtime.close()
    }
  }, 30_000)

  it('a sampling that would pass the cap is not sent: the code gets the error, and the run ends budget', async () => {
    const budget = new Budget(undefined, 'raise it')
    // The first turn fits (its estimate + 20 ≤ 1010); after it 1005 are spent, so no sampling of up to 10 tokens fits.
    budget.setLimits({ maxTotalTokens: 1010 })
    const { runtime, tools } = await codeRuntime({ asker: fixtureEntry('elicit') }, budget)
    try {
      script({ input_tokens: 1_000, output_tokens: 5 })
      sampling.length = 0
      const { outcome, events } = await agent(tools, { budget })
      expect(sampling).toHaveLength(0)
      const run = ofType(events, 'tool_result').find((e) => e.tool === 'mycelium:run_code')!
      expect(run.ok).toBe(false)
      expect(JSON.stringify(run.content)).toContain('budget reached')
      expect(outcome).toMatchObject({ reason: 'budget', turns: 1 })
    } finally {
      await runtime.close()
    }
  }, 30_000)
})

describe.runIf(hasBwrap)('code mode: inner calls are execute_tool spans under the run’s', () => {
  const receiver = new OtlpReceiver()
  beforeAll(() => receiver.start())
  afterAll(() => receiver.close())

  it('invoke_agent → execute_tool run_code → tools/call mycelium__run_code → execute_tool echo:echo → the child', async () => {
    const tracing = (await openTracing({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_METRICS_EXPORTER: 'none',
      },
      config: undefined,
      version: 'test',
      warn: () => {},
    }))!
    const { runtime, tools } = await codeRuntime({ echo: fixtureEntry('echo') }, new Budget(undefined, ''), tracing)
    const root = startRunSpan(tracing, 'claude-test', 'run')!
    try {
      fake.setScript((_req, i) =>
        i === 0
          ? { content: [runCode("return await tools.echo.echo({ message: 'traced' })")] }
          : { content: [{ type: 'text', text: 'done' }] },
      )
      const { outcome } = await agent(tools, { tracing: root })
      expect(outcome.reason).toBe('done')
    } finally {
      root.span.end()
      await runtime.close()
    }
    const traceId = root.span.traceId
    await waitFor(
      () => receiver.spans.some((s) => s.traceId === traceId && s.name === 'invoke_agent mycelium'),
      10_000,
      'the run’s spans',
    )
    const spans = receiver.spans.filter((s) => s.traceId === traceId)
    const one = (name: string) => {
      const found = spans.filter((s) => s.name === name)
      expect(
        found.map((s) => s.name),
        name,
      ).toEqual([name])
      return found[0]!
    }
    const chain = [
      'invoke_agent mycelium',
      'execute_tool mycelium:run_code',
      'tools/call mycelium__run_code',
      'execute_tool echo:echo',
      'tools/call echo__echo',
      'tools/call echo',
    ].map(one)
    for (let i = 1; i < chain.length; i++) expect(chain[i]!.parentSpanId, chain[i]!.name).toBe(chain[i - 1]!.spanId)
  }, 30_000)
})

describe.runIf(hasBwrap)('code mode in a workflow: run_code over the skills’ scripts', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-code-wf-'))
  const scripts = path.join(dir, 'skills', 'deploy', 'scripts')
  mkdirSync(scripts, { recursive: true })
  writeFileSync(
    path.join(dir, 'skills', 'deploy', 'SKILL.md'),
    '---\nname: deploy\ndescription: Deploys\nallowedRoles: [ops]\nallowedTools: []\n---\nDeploy.\n',
  )
  for (const [name, body] of [
    ['ok.sh', 'echo ok-out'],
    ['fail.sh', 'echo disk full >&2; exit 2'],
  ]) {
    writeFileSync(path.join(scripts, name!), `#!/bin/sh\n${body}\n`)
    chmodSync(path.join(scripts, name!), 0o755)
  }
  writeFileSync(
    path.join(dir, 'mycelium.config.json'),
    JSON.stringify({ roles: { default: 'ops' }, agent: { codeMode: true } }),
  )
  const h = new PolicyHarness(() => loadConfig({ cwd: dir, env: {} }))
  beforeAll(() => h.start(), 30_000)
  afterAll(() => h.close())

  it('the code sees list_skills, read_skill and run_script; the first script that fails ends the workflow and no later one runs', async () => {
    const policy = h.mode.kind === 'policy' ? h.mode.state.policy : undefined
    const toolbox = new WorkflowToolbox(
      policy!.reachable('ops'),
      await createSandboxRunner(h.loaded),
      '__',
      await testCodeRunner(h.loaded),
    )
    const tools = new ToolDoor([toolbox])
    expect(tools.list().map((t) => t.id)).toEqual([
      'mycelium:list_skills',
      'mycelium:read_skill',
      'mycelium:run_script',
      'mycelium:run_code',
    ])
    const code = `const run = (script) => tools.mycelium.run_script({ skill: 'deploy', script }).catch((e) => e.message)
      return { keys: Object.keys(tools.mycelium), first: await run('ok.sh'), failed: await run('fail.sh'), after: await run('ok.sh') }`
    fake.setScript((_req, i) =>
      i === 0 ? { content: [runCode(code)] } : { content: [{ type: 'text', text: 'should not be asked' }] },
    )
    const { outcome, events } = await agent(tools, { failed: () => toolbox.failure !== undefined })
    expect(outcome.reason).toBe('failed')
    expect(toolbox.failure).toMatchObject({ skill: 'deploy', script: 'fail.sh', exitCode: 2 })
    const run = ofType(events, 'tool_result').find((e) => e.tool === 'mycelium:run_code')!
    const seen = JSON.parse((run.content[0] as { text: string }).text) as Record<string, unknown>
    expect(seen.keys).toEqual(['list_skills', 'read_skill', 'run_script'])
    expect(JSON.stringify(seen.first)).toContain('ok-out')
    expect(seen.failed).toContain('disk full')
    expect(seen.after).toBe('The workflow ended: script fail.sh of skill deploy failed.')
    expect(ofType(events, 'tool_call').filter((e) => e.parentId !== undefined)).toHaveLength(3)
  }, 30_000)
})
