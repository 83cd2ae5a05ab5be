import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { childSessions } from '../../src/eras/child-sessions.js'
import { HttpFace } from '../../src/http/http-face.js'
import { readMetricsToken } from '../../src/http/bearer-tokens.js'
import { createLogger } from '../../src/logger.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { faceOptions, serveFace } from '../helpers/http.js'
import { fixtureEntry, loadedConfig, waitFor } from '../helpers/runtime.js'

const SCRAPER = 'scraper-0123456789abcdef0123456789abcdef'

/**
 * `/readyz` while a child is still starting: not ready, and to the metrics
 * credential which children it waits for (`starting`); to anyone else only
 * that it is not ready. A real child held in its start by a gate file.
 */
describe('/readyz while children start', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-readyz-'))
  const gate = path.join(dir, 'gate')
  let runtime: Runtime
  let server: Server
  let base = ''

  beforeAll(async () => {
    runtime = new Runtime({
      loaded: loadedConfig({
        mcpServers: { slow: fixtureEntry('gated-start', { env: { START_GATE: gate } }), echo: fixtureEntry('echo') },
      }),
      logger: createLogger({ quiet: true }),
      version: 'test',
      host: hostForThisProcess(),
      childSessions,
    })
    // Not awaited: the slow child waits for its gate.
    void runtime.start()
    const face = new HttpFace(
      faceOptions(runtime, [], { metricsToken: readMetricsToken({ env: 'M' }, { M: SCRAPER }, []) }),
    )
    ;({ base, server } = await serveFace(face))
  })
  afterAll(async () => {
    await new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())))
    await runtime?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const readyz = async (token?: string) => {
    const r = await fetch(`${base}/readyz`, token ? { headers: { Authorization: `Bearer ${token}` } } : {})
    return { status: r.status, body: (await r.json()) as Record<string, unknown> }
  }

  it('names the children still starting to the metrics credential, and becomes ready once they are up', async () => {
    await waitFor(() => runtime.supervisor.children.get('echo')!.state === 'RUNNING', 10_000, 'echo to run')
    expect(await readyz(SCRAPER)).toEqual({
      status: 503,
      body: { ready: false, starting: ['slow'], notRunning: [{ server: 'slow', state: 'INITIALIZING' }] },
    })
    // Anyone else: not ready, and no name.
    expect(await readyz()).toEqual({ status: 503, body: { ready: false } })
    writeFileSync(gate, '')
    await waitFor(async () => (await readyz()).status === 200, 10_000, 'ready')
    expect(await readyz(SCRAPER)).toEqual({ status: 200, body: { ready: true, starting: [], notRunning: [] } })
  })
})
