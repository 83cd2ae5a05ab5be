import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureEntry } from '../helpers/runtime.js'

/** `myc serve` with this on stdin, then EOF: its stdout and exit code. */
function serveWith(input: string) {
  requireBundle()
  const r = spawnSync(
    process.execPath,
    [bundle, 'serve', '--config', writeConfig({ mcpServers: { echo: fixtureEntry('echo') } })],
    { input, encoding: 'utf8', timeout: 20_000 },
  )
  return { code: r.status, stdout: r.stdout }
}

describe('myc serve (build/myc.cjs) ends when its client goes away', () => {
  // That EOF ends the children's wait for an initialize is tests/server/serve-stdio.test.ts.
  it('without a single message: exit 0, nothing written', () => {
    const r = serveWith('')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('')
  })

  it('after junk only: every line answered, then exit 0', () => {
    const r = serveWith('null\n[]\n{"jsonrpc":"2.0","id":"x","method":"ping","params":5}\n')
    expect(r.code).toBe(0)
    const answers = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number } })
    expect(answers.map((a) => [a.id, a.error?.code])).toEqual([
      [null, -32600],
      [null, -32600],
      ['x', -32602],
    ])
  })

  it('after an initialize: answered, then exit 0', () => {
    const r = serveWith(
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n',
    )
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout.trim())).toMatchObject({ id: 1, result: { serverInfo: { name: 'mycelium' } } })
  })
})
