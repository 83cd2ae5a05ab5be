import { describe, expect, it } from 'vitest'
import { connectToMyc, isAlive, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { connectHttp, freePort } from '../helpers/http.js'
import { waitFor } from '../helpers/runtime.js'

/** `myc serve --http PORT --stdio`: one process, one set of children, a stdio client and HTTP sessions at once. */
describe('myc serve --http with --stdio (build/myc.cjs)', () => {
  it('serves the launching client on stdio and others over HTTP, sharing the children; stdin ending stops it all', async () => {
    const config = writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })
    const port = await freePort()
    const { client: local, transport } = await connectToMyc([
      'serve',
      '--http',
      `127.0.0.1:${port}`,
      '--stdio',
      '--config',
      config,
    ])
    const pid = transport.pid!
    let stderr = ''
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      20_000,
      'the HTTP face to be ready',
    )
    const { client: remote } = await connectHttp(`http://127.0.0.1:${port}/mcp`)
    const names = async (c: typeof local) => (await c.listTools()).tools.map((t) => t.name).sort()
    expect(await names(local)).toEqual(await names(remote))
    const r = (await local.callTool({ name: 'echo__echo', arguments: { message: 'over stdio' } })) as {
      content: Array<{ text: string }>
    }
    expect(r.content[0]!.text).toBe('over stdio')
    await remote.close()
    await local.close()
    await waitFor(() => !isAlive(pid), 20_000, 'myc to exit once stdin ended')
    expect(stderr).toMatch(/stdin closed: taking no new sessions/)
    expect(stderr).not.toMatch(/TypeError|Unhandled/)
  }, 60_000)

  it('--stdio without --http is a usage error', async () => {
    const { spawnSync } = await import('node:child_process')
    const { bundle } = await import('../helpers/e2e.js')
    const r = spawnSync(process.execPath, [bundle, 'serve', '--stdio', '--config', writeConfig({ mcpServers: {} })], {
      encoding: 'utf8',
      input: '',
    })
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/--stdio goes with --http/)
  })
})
