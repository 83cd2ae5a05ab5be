import { execFile } from 'node:child_process'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import { startHttpMyc, type HttpMyc } from '../helpers/http.js'

const run = promisify(execFile)
const inspectorCli = path.join(repoRoot, 'node_modules/@modelcontextprotocol/inspector-cli/build/index.js')

/**
 * Another client than our SDK's: the MCP Inspector CLI over Streamable HTTP
 * (`--transport http`) against `build/myc.cjs serve --http`, on loopback
 * without credentials (the Inspector CLI of this era sends no headers).
 */
describe('the MCP Inspector CLI against myc serve --http', () => {
  let m: HttpMyc
  beforeAll(async () => {
    const config = writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })
    m = await startHttpMyc(config)
  }, 30_000)
  afterAll(async () => {
    await m?.stop()
  })

  const inspect = async (...args: string[]) =>
    JSON.parse(
      (await run(process.execPath, [inspectorCli, m.url, '--transport', 'http', ...args], { timeout: 30_000 })).stdout,
    ) as Record<string, unknown>

  it('lists and calls tools, reads resources and gets prompts', async () => {
    const tools = (await inspect('--method', 'tools/list')).tools as Array<{ name: string }>
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo__echo', 'echo__add']))
    const called = await inspect('--method', 'tools/call', '--tool-name', 'echo__add', '--tool-arg', 'a=2', 'b=40')
    expect(JSON.stringify(called.content)).toContain('42')
    const read = await inspect('--method', 'resources/read', '--uri', 'echo://static')
    expect((read.contents as Array<{ uri: string }>)[0]!.uri).toBe('echo://static')
    const prompt = await inspect('--method', 'prompts/get', '--prompt-name', 'echo__greet', '--prompt-args', 'who=Ada')
    expect(JSON.stringify(prompt.messages)).toContain('Ada')
  }, 60_000)

  it('a tool that does not exist is an error the Inspector reports', async () => {
    await expect(
      run(
        process.execPath,
        [inspectorCli, m.url, '--transport', 'http', '--method', 'tools/call', '--tool-name', 'nope__nothing'],
        { timeout: 30_000 },
      ),
    ).rejects.toMatchObject({
      stderr: expect.stringMatching(/Unknown tool: nope__nothing/),
    })
  }, 30_000)
})
