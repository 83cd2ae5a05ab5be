import { readFileSync } from 'node:fs'
import path from 'node:path'
import * as v from 'valibot'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentEventSchema, type AgentEvent } from '../../src/agent/events.js'
import { runAgentHere, type AgentRun } from '../helpers/agent.js'
import { writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic, type RecordedRequest } from '../helpers/fake-anthropic.js'
import { repoRoot } from '../helpers/fixtures.js'
import { fixtureEntry } from '../helpers/runtime.js'

/**
 * Budgets (src/agent/budget.ts, docs/tokens.md "Capping the spend"): `myc
 * run`, `adhoc` and `workflow` against the fake Messages API, which reports
 * the usage each test chooses. The rule checked: a request is sent only when
 * the spend so far, plus its input estimated as the characters of the JSON of
 * its system prompt, messages and tools divided by 4, plus its max_tokens,
 * stays under the cap; the run then ends `budget`, exit 3.
 */

const fixtureSkills = path.join(repoRoot, 'tests/fixtures/policy/basic/skills')
const price = { inputPerMTok: 3, outputPerMTok: 15 }
const end = (r: AgentRun) => r.events.at(-1) as Extract<AgentEvent, { type: 'session_end' }>
/** The estimate of a request's input, as the agent makes it before sending. */
const estimate = (request: RecordedRequest) =>
  Math.ceil(
    JSON.stringify({ system: request.body.system, messages: request.body.messages, tools: request.body.tools }).length /
      4,
  )
/** The usage records of a run's session file, summed. */
const recorded = (config: string, sessionId: string) => {
  const lines = readFileSync(path.join(path.dirname(config), '.mycelium', 'sessions', `${sessionId}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
  const usage = lines
    .map((l) => JSON.parse(l) as { type: string; inputTokens?: number; outputTokens?: number; costUsd?: number })
    .filter((r) => r.type === 'usage')
  return {
    inputTokens: usage.reduce((a, r) => a + r.inputTokens!, 0),
    outputTokens: usage.reduce((a, r) => a + r.outputTokens!, 0),
    costUsd: usage.reduce((a, r) => a + (r.costUsd ?? 0), 0),
    records: usage,
  }
}

// A run starts every server of its config, and a budget is myc's alone: the loops below have no server, and the
// model's calls of echo__echo, a tool that does not exist there, are answered by myc; each is a turn all the same.
describe('budgets: no request starts that could pass the cap (in process)', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('--max-budget-usd below what even the first request could cost: a usage error (exit 2) before anything starts', async () => {
    const config = writeConfig({ mcpServers: { echo: fixtureEntry('echo') }, agent: { price } })
    fake.setScript(() => ({ content: [{ type: 'text', text: 'should not be asked' }] }))
    const before = fake.requests.length
    // The first request could cost $0.12 (max_tokens 8192 at $15/M): no cap of $0.0001 lets any request start.
    const r = await runAgentHere(['run', 'hello', '--json', '--config', config, '--max-budget-usd', '0.0001'], { fake })
    expect(r.code, r.stderr).toBe(2)
    for (const event of r.events) expect(v.safeParse(AgentEventSchema, event).success, JSON.stringify(event)).toBe(true)
    expect(fake.requests.length).toBe(before)
    expect(end(r)).toMatchObject({ ok: false, reason: 'error', turns: 0, exitCode: 2 })
    expect(r.events.find((e) => e.type === 'error')).toMatchObject({
      code: 'usage',
      message: expect.stringMatching(
        /^--max-budget-usd 0\.0001: no request fits, not even the first \(spent \$0 of the \$0\.0001 cap, and the next request could cost up to \$0\.12\d* \(raise it, or lower agent\.maxTokens/,
      ),
    })
    // A person reading the job's log gets the line too.
    expect(r.stderr).toMatch(/^myc: --max-budget-usd 0\.0001: no request fits/m)
  }, 30_000)

  it('the skill classifier’s request is one of the run’s: one that could pass the cap is not sent either', async () => {
    const config = writeConfig({
      mcpServers: { echo: fixtureEntry('echo') },
      skills: { dirs: [fixtureSkills] },
      roles: { default: 'developer' },
      // The task's own request fits a 150-token cap (100 out at most), so the run starts.
      agent: { classifier: { model: 'tiny-classifier' }, maxTokens: 100 },
    })
    fake.setScript(() => ({ content: [{ type: 'text', text: '[]' }] }))
    const before = fake.requests.length
    // The classifier asks for up to 200 tokens: over a 150-token cap before a word is sent.
    const r = await runAgentHere(['run', 'hello', '--json', '--config', config, '--max-tokens-total', '150'], { fake })
    expect(r.code, r.stderr).toBe(3)
    expect(fake.requests.slice(before).map((q) => q.body.model)).toEqual([])
    expect(end(r)).toMatchObject({ reason: 'budget', turns: 0 })
  }, 30_000)

  it('--max-budget-usd: the requests that fit are sent, none that could pass the cap; the spend is in session_end and the session file', async () => {
    // Each request may write up to 2000 tokens ($0.03), and writes 10: the worst case, not the usual, decides.
    const config = writeConfig({ mcpServers: {}, agent: { price, maxTokens: 2_000 } })
    fake.setScript(() => ({
      content: [{ type: 'tool_use', name: 'echo__echo', input: { message: 'again' } }],
      usage: { input_tokens: 300, output_tokens: 10 },
    }))
    const before = fake.requests.length
    const cap = 0.035
    const r = await runAgentHere(['run', 'loop', '--json', '--config', config, '--max-budget-usd', String(cap)], {
      fake,
    })
    expect(r.code, r.stderr).toBe(3)
    const sent = fake.requests.slice(before)
    expect(sent.length).toBeGreaterThanOrEqual(2)
    const cost = (n: number) => n * ((300 * 3 + 10 * 15) / 1e6)
    // Each request was sent only with its worst case under the cap.
    sent.forEach((request, i) =>
      expect(cost(i) + (estimate(request) * 3 + 2_000 * 15) / 1e6, `request ${i}`).toBeLessThanOrEqual(cap),
    )
    // And the next, at least as large as the last, would not have fit.
    expect(cost(sent.length) + (estimate(sent.at(-1)!) * 3 + 2_000 * 15) / 1e6).toBeGreaterThan(cap)
    expect(end(r)).toMatchObject({
      reason: 'budget',
      exitCode: 3,
      turns: sent.length,
      usage: { inputTokens: 300 * sent.length, outputTokens: 10 * sent.length },
    })
    expect(end(r).costUsd).toBeCloseTo(cost(sent.length), 9)
    expect(end(r).costUsd!).toBeLessThanOrEqual(cap)
    const file = recorded(config, end(r).sessionId)
    expect(file).toMatchObject({ inputTokens: 300 * sent.length, outputTokens: 10 * sent.length })
    expect(file.costUsd).toBeCloseTo(cost(sent.length), 9)
  }, 30_000)

  it('--max-tokens-total: stops before the request that could take the tokens past N', async () => {
    // 1,100 tokens a request; each may write up to 2,000.
    const config = writeConfig({ mcpServers: {}, agent: { maxTokens: 2_000 } })
    fake.setScript(() => ({
      content: [{ type: 'tool_use', name: 'echo__echo', input: { message: 'again' } }],
      usage: { input_tokens: 1_000, output_tokens: 100 },
    }))
    const before = fake.requests.length
    const r = await runAgentHere(['run', 'loop', '--json', '--config', config, '--max-tokens-total', '4000'], { fake })
    expect(r.code, r.stderr).toBe(3)
    const sent = fake.requests.slice(before)
    expect(sent).toHaveLength(2)
    sent.forEach((request, i) =>
      expect(i * 1_100 + estimate(request) + 2_000, `request ${i}`).toBeLessThanOrEqual(4_000),
    )
    expect(2 * 1_100 + estimate(sent[1]!) + 2_000).toBeGreaterThan(4_000)
    expect(end(r)).toMatchObject({
      reason: 'budget',
      exitCode: 3,
      turns: 2,
      usage: { inputTokens: 2_000, outputTokens: 200 },
    })
    expect(end(r)).not.toHaveProperty('costUsd')
    expect(r.events.find((e) => e.type === 'error')).toMatchObject({
      code: 'budget_reached',
      message: expect.stringContaining('spent 2200 tokens of the 4000-token cap'),
    })
    expect(recorded(config, end(r).sessionId)).toMatchObject({ inputTokens: 2_000, outputTokens: 200 })
    // Without --json: the reason on stderr, exit 3.
    const human = await runAgentHere(['run', 'loop', '--config', config, '--max-tokens-total', '4000'], { fake })
    expect(human.code).toBe(3)
    expect(human.stderr).toMatch(/myc: budget reached: spent 2200 tokens of the 4000-token cap/)
    expect(human.stderr).toMatch(/run ended: budget after 2 turns/)
  }, 30_000)

  it('a role’s budget (or the one it inherits) wins over agent.budget; another role keeps agent.budget', async () => {
    // No server (see above): a role's budget is myc's alone.
    const config = writeConfig({
      mcpServers: {},
      skills: { dirs: [fixtureSkills] },
      roles: {
        default: 'guest',
        definitions: { developer: { budget: { maxOutputTokens: 12 } }, lead: { inherits: 'developer' } },
      },
      session: { defaultSkills: ['common'], protectedSkills: ['common'] },
      agent: { maxTokens: 5, budget: { maxOutputTokens: 1_000_000 } },
    })
    fake.setScript(() => ({
      content: [{ type: 'tool_use', name: 'echo__echo', input: { message: 'again' } }],
      usage: { input_tokens: 10, output_tokens: 5 },
    }))
    // 5 out per request, at most 5 each: the third could pass 12.
    for (const role of ['developer', 'lead']) {
      const before = fake.requests.length
      const r = await runAgentHere(['run', 'loop', '--json', '--config', config, '--role', role, '--max-turns', '6'], {
        fake,
      })
      expect(r.code, `${role}: ${r.stderr}`).toBe(3)
      expect(fake.requests.length - before).toBe(2)
      expect(end(r)).toMatchObject({ reason: 'budget', turns: 2, usage: { outputTokens: 10 } })
      expect(r.events.find((e) => e.type === 'error')).toMatchObject({
        message: expect.stringContaining('spent 10 output tokens of the 12 cap'),
      })
    }
    const guest = await runAgentHere(
      ['run', 'loop', '--json', '--config', config, '--role', 'guest', '--max-turns', '4'],
      { fake },
    )
    expect(end(guest)).toMatchObject({ reason: 'max_turns', turns: 4 })
  }, 60_000)

  it('a budget in USD without agent.price is a usage error (exit 2) that says to set agent.price; nothing is asked of the model', async () => {
    const config = writeConfig({ mcpServers: { echo: fixtureEntry('echo') } })
    fake.setScript(() => ({ content: [{ type: 'text', text: 'should not be asked' }] }))
    const before = fake.requests.length
    const flag = await runAgentHere(['run', 'x', '--config', config, '--max-budget-usd', '1'], { fake })
    expect(flag.code).toBe(2)
    expect(flag.stderr).toMatch(
      /--max-budget-usd caps the spend in USD, and there is no price to count it with: set agent\.price/,
    )
    const json = await runAgentHere(['run', 'x', '--json', '--config', config, '--max-budget-usd', '1'], { fake })
    expect(json.code).toBe(2)
    expect(end(json)).toMatchObject({ reason: 'error', exitCode: 2 })
    expect(json.events.find((e) => e.type === 'error')).toMatchObject({
      code: 'usage',
      message: expect.stringContaining('set agent.price'),
    })
    const configured = await runAgentHere(
      [
        'run',
        'x',
        '--config',
        writeConfig({ mcpServers: { echo: fixtureEntry('echo') }, agent: { budget: { maxUsd: 1 } } }),
      ],
      { fake },
    )
    expect(configured.code).toBe(2)
    expect(configured.stderr).toMatch(/agent\.budget\.maxUsd caps the spend in USD.*set agent\.price/)
    const chat = await runAgentHere(['chat', '--config', config, '--max-budget-usd', '1'], { fake, input: 'hi\n' })
    expect(chat.code).toBe(2)
    expect(chat.stderr).toMatch(/set agent\.price/)
    for (const bad of ['abc', '0', '-1']) {
      const r = await runAgentHere(['run', 'x', '--config', config, '--max-budget-usd', bad], { fake })
      expect(r.code).toBe(2)
      expect(r.stderr).toMatch(/--max-budget-usd takes an amount of USD above 0/)
    }
    const tokens = await runAgentHere(['adhoc', 'x', '--config', config, '--max-tokens-total', '1.5'], { fake })
    expect(tokens.code).toBe(2)
    expect(tokens.stderr).toMatch(/--max-tokens-total takes a whole number of at least 1, not "1\.5"/)
    expect(fake.requests.length).toBe(before)
  }, 60_000)

  it('holds in adhoc and workflow too', async () => {
    // No grow (a run starts every server of its config): a guest sees none of its tools, and the requests are the same without it.
    const config = writeConfig({
      mcpServers: { echo: fixtureEntry('echo') },
      skills: { dirs: [fixtureSkills] },
      roles: { default: 'guest' },
      session: { defaultSkills: ['common'] },
      // The task alone and 5 tokens of answer fit $0.0001 (so the run starts); with the system prompt and the tools, no request does.
      agent: { price, maxTokens: 5 },
    })
    fake.setScript(() => ({ content: [{ type: 'text', text: 'should not be asked' }] }))
    const before = fake.requests.length
    for (const mode of ['adhoc', 'workflow']) {
      const r = await runAgentHere([mode, 'x', '--json', '--config', config, '--max-budget-usd', '0.0001'], { fake })
      expect(r.code, `${mode}: ${r.stderr}`).toBe(3)
      expect(end(r)).toMatchObject({ reason: 'budget', turns: 0 })
    }
    expect(fake.requests.length).toBe(before)
  }, 60_000)

  it('a child’s sampling that would pass the cap is not sent: the child gets the error, and the run ends budget', async () => {
    const config = writeConfig({ mcpServers: { asker: fixtureEntry('elicit') }, agent: { maxTokens: 20 } })
    const sampling: RecordedRequest[] = []
    fake.setScript((request) => {
      if (request.body.stream !== true) {
        sampling.push(request)
        return { content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 1, output_tokens: 1 } }
      }
      return {
        content: [{ type: 'tool_use', name: 'asker__sample', input: {} }],
        usage: { input_tokens: 1_000, output_tokens: 5 },
      }
    })
    const before = fake.requests.length
    // The first turn fits (its estimate + 20 ≤ 1010); after it 1005 are spent, so no sampling of up to 10 tokens fits.
    const r = await runAgentHere(['run', 'sample', '--json', '--config', config, '--max-tokens-total', '1010'], {
      fake,
    })
    expect(r.code, r.stderr).toBe(3)
    expect(fake.requests.length - before).toBe(1)
    expect(sampling).toHaveLength(0)
    expect(JSON.stringify(r.events.find((e) => e.type === 'tool_result'))).toContain('budget reached')
    expect(end(r)).toMatchObject({ reason: 'budget', turns: 1, usage: { inputTokens: 1_000, outputTokens: 5 } })
  }, 30_000)
})
