import { EventEmitter } from 'node:events'
import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { childSessions } from '../../src/eras/child-sessions.js'
import { clientFaces } from '../../src/eras/client-faces.js'
import { createLogger } from '../../src/logger.js'
import { openView } from '../../src/principal/view.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import { serveStdio } from '../../src/server/serve-stdio.js'
import { fixtureEntry, loadedConfig } from '../helpers/runtime.js'

describe('serving on stdio when the client goes away', () => {
  it('without a single message: ends, without waiting for an initialize that will not come', async () => {
    // Children wait for the client's capabilities, here for ten minutes: only the end of stdin can end that wait in time.
    const runtime = new Runtime({
      loaded: loadedConfig({ mcpServers: { echo: fixtureEntry('echo') } }),
      logger: createLogger({ quiet: true }),
      version: 'test',
      host: hostForThisProcess(),
      childSessions,
      waitForClientMs: 600_000,
    })
    const stdin = new PassThrough()
    stdin.end()
    const stdout = new PassThrough()
    let written = ''
    stdout.on('data', (chunk: Buffer) => (written += chunk.toString()))
    const signals = new EventEmitter()
    const code = await serveStdio({
      runtime,
      faces: clientFaces(),
      view: openView(),
      logger: runtime.logger,
      stdin,
      stdout,
      signals,
    })
    expect(code).toBe(0)
    expect(written).toBe('')
  })
})
