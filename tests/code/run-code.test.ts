import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Client } from '@modelcontextprotocol/client'
import { loadConfig } from '../../src/config/load.js'
import type { CodeRunner } from '../../src/code/code-runner.js'
import { codeProject, FORGED_CALL, hasBwrap, runCode, runnerProcesses, testCodeRunner } from '../helpers/code-mode.js'
import { connectClient, PolicyHarness } from '../helpers/runtime.js'
import { waitFor } from '../helpers/wait-for.js'

describe.runIf(hasBwrap)('code mode: run_code on a session’s call path', () => {
  const file = codeProject({ audit: { file: 'audit.jsonl' } })
  const h = new PolicyHarness(() => loadConfig({ configPath: file, cwd: path.dirname(file), env: {} }))
  let runner: CodeRunner
  beforeAll(async () => {
    await h.start()
    runner = await testCodeRunner(h.loaded)
  })
  afterAll(() => h.close())

  async function session(role = 'guest'): Promise<Client> {
    return (await connectClient(h.runtime, { view: await h.view(role, { codeRunner: runner }) })).client
  }
  const audit = () =>
    readFileSync(path.join(path.dirname(file), 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)

  it('refuses a call without code, naming the field, and a run inside a run', async () => {
    const client = await session()
    const none = await client.callTool({ name: 'mycelium__run_code', arguments: {} })
    expect(none.isError).toBe(true)
    expect(JSON.stringify(none.content)).toMatch(/mycelium__run_code needs \\"code\\"/)
    const nested = await runCode(client, "return await tools.mycelium.search_tools({ query: 'add' })")
    expect(nested.isError).toBe(false)
    const forged = await runCode(
      client,
      `${FORGED_CALL}return await ask(7e6, 'mycelium__run_code', { code: 'return 1' })`,
    )
    expect(forged.text).toMatch(/run_code cannot run inside a run/)
    await client.close()
  })

  it('lists the meta tools, search_tools and run_code only; a child tool called by name still works', async () => {
    const client = await session()
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'mycelium__search_tools',
      'mycelium__run_code',
      'mycelium__list_skills',
      'mycelium__activate_skill',
      'mycelium__deactivate_skill',
      'mycelium__get_context',
    ])
    const direct = await client.callTool({ name: 'echo__echo', arguments: { message: 'direct' } })
    expect(direct.content).toEqual([{ type: 'text', text: 'direct' }])
    await client.close()
  })

  it('search_tools gives signatures, and names the skill a tool needs', async () => {
    const client = await session()
    const found = await client.callTool({ name: 'mycelium__search_tools', arguments: { query: 'add numbers sum' } })
    const hit = (found.structuredContent as { tools: Array<Record<string, unknown>> }).tools[0]
    expect(hit).toEqual({
      name: 'echo__add',
      description: 'Adds a and b',
      skills: ['math'],
      active: false,
      signature: 'tools.echo.add(args: { a: number; b: number }): Promise<unknown>',
    })
    expect((found.content as Array<{ text: string }>)[0]!.text).toMatch(
      /^- Adds a and b \(activate skill math first\)\n  tools\.echo\.add\(args: \{ a: number; b: number \}\): Promise<unknown>\n/,
    )
    await client.close()
  })

  it('runs the code against the tools: return await tools.echo.echo({ message }) gives "hi"', async () => {
    const client = await session()
    expect(await runCode(client, "return await tools.echo.echo({ message: 'hi' })")).toEqual({
      text: '"hi"',
      isError: false,
    })
    const both = await runCode(client, "console.log('first', 1); return { n: 2 }")
    expect(both.text).toBe('first 1\n{"n":2}')
    const failed = await runCode(client, "await tools.echo.echo({ message: 'x' })\nthrow new Error('boom')")
    expect(failed).toEqual({ text: 'Error: boom\n    at code.js:2:7', isError: true })
    await client.close()
  })

  it('shows only the servers and tools the session reaches, live', async () => {
    const client = await session()
    const keys = await runCode(client, 'return [Object.keys(tools), Object.keys(tools.echo), typeof tools.hang]')
    expect(JSON.parse(keys.text)).toEqual([['mycelium', 'echo'], ['echo'], 'undefined'])
    // A skill activated inside the run counts from then on: its tools are there before the call that added them returns.
    const grown = await runCode(
      client,
      `const echo = tools.echo
       const before = typeof echo.add
       await tools.mycelium.activate_skill({ name: 'math' })
       return [before, Object.keys(echo), await echo.add({ a: 2, b: 3 })]`,
    )
    expect(JSON.parse(grown.text)).toEqual(['undefined', ['echo', 'add'], '5'])
    await client.close()
  })

  it('a hidden tool is out of reach by any trick, and fails exactly as one that does not exist', async () => {
    const client = await session()
    const tricks = await runCode(
      client,
      `${FORGED_CALL}return {
         reflect: typeof Reflect.get(tools.echo, 'fail'),
         proto: typeof Object.getPrototypeOf(tools.echo).fail,
         names: Object.getOwnPropertyNames(tools.echo),
         hidden: await ask(9e6, 'echo__fail'),
         missing: await ask(9e6 + 1, 'echo__nothing'),
       }`,
    )
    const seen = JSON.parse(tricks.text) as Record<string, unknown>
    expect(seen).toMatchObject({ reflect: 'undefined', proto: 'undefined', names: ['echo'] })
    expect(seen.hidden).toBe('Unknown tool: echo__fail')
    expect(String(seen.hidden).replace('echo__fail', 'X')).toBe(String(seen.missing).replace('echo__nothing', 'X'))
    await client.close()
  })

  it('records each inner call in the audit log with the run’s id', async () => {
    const client = await session()
    await runCode(client, "await tools.echo.echo({ message: 'a' }); await tools.echo.echo({ message: 'b' })")
    if (h.mode.kind === 'policy') await h.mode.audit.flush()
    const calls = audit().filter((e) => e.event === 'tool_call')
    const run = calls.findLast((e) => e.tool === 'mycelium__run_code')!
    expect(run.runId).toMatch(/^[0-9a-f-]{36}$/)
    const inner = calls.filter((e) => e.runId === run.runId && e.tool !== 'mycelium__run_code')
    expect(inner.map((e) => [e.tool, e.outcome, e.argumentKeys])).toEqual([
      ['echo__echo', 'ok', ['message']],
      ['echo__echo', 'ok', ['message']],
    ])
    await client.close()
  })

  it('cancelling the run cancels the inner call in flight and ends the runner', async () => {
    const client = await session()
    const hang = h.runtime.supervisor.children.get('hang')!
    const controller = new AbortController()
    const call = client
      .callTool(
        {
          name: 'mycelium__run_code',
          arguments: { code: "await tools.mycelium.activate_skill({ name: 'waiting' }); await tools.hang.hang({})" },
        },
        { signal: controller.signal },
      )
      .catch((error: unknown) => error)
    await waitFor(() => [...hang.callersInFlight()].length > 0, 20_000, 'the inner call to reach hang')
    controller.abort()
    await call
    await waitFor(() => [...hang.callersInFlight()].length === 0, 10_000, 'the inner call to be cancelled')
    await waitFor(() => runnerProcesses().length === 0, 10_000, 'the runner to end')
    await client.close()
  })
})
