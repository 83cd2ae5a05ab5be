import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Client } from '@modelcontextprotocol/client'
import { prepareCodeMode } from '../../src/code/code-mode.js'
import { createView } from '../../src/principal/policy-mode.js'
import { createLogger } from '../../src/logger.js'
import { ExecutorProbe } from '../../src/sandbox/probe.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import { hasBwrap, runCode, runnerBundle } from '../helpers/code-mode.js'
import { connectClient, loadedConfig, startRuntime } from '../helpers/runtime.js'

/**
 * TypeScript in code mode, under the Node.js the single executables are
 * built on (22.23.2, from the npm registry: build/build-bin.mjs): its own
 * type stripper, no compiler in the bundle. On the Node.js 20 of the
 * everyday suite the code must be JavaScript (tests/code/run-code.test.ts).
 */
describe.runIf(hasBwrap && process.platform === 'linux' && process.arch === 'x64')(
  'code mode strips TypeScript types under Node.js 22',
  () => {
    const raw = {
      mcpServers: { echo: { command: process.execPath, args: [fixtureServer('text-echo')] } },
      session: { codeMode: true },
    }
    let runtime: Runtime
    let client: Client
    let description = ''
    beforeAll(async () => {
      const { baseBinary } = (await import(path.join(repoRoot, 'build', 'build-bin.mjs'))) as {
        baseBinary: (target: string) => Promise<string>
      }
      const node22 = await baseBinary('linux-x64')
      const launch = { argv: [node22, runnerBundle], files: [runnerBundle], typescript: true }
      const setup = await prepareCodeMode(loadedConfig(raw), { probe: new ExecutorProbe(), launch })
      if (!setup.ok) throw new Error(setup.reason)
      runtime = await startRuntime(raw)
      const view = createView({ kind: 'open' }, loadedConfig(raw), {
        env: {},
        catalogue: runtime.catalogue,
        logger: createLogger({ quiet: true }),
        codeRunner: setup.runner,
      })
      client = (await connectClient(runtime, { view })).client
      description = (await client.listTools()).tools.find((t) => t.name === 'mycelium__run_code')!.description ?? ''
    }, 120_000)
    afterAll(async () => {
      await client?.close()
      await runtime?.close()
    })

    it('says so in run_code’s description, and runs typed code', async () => {
      expect(description).toContain('JavaScript or TypeScript (types are stripped)')
      const r = await runCode(
        client,
        `interface Echoed { text: string }
const said: string = await tools.echo.echo({ message: 'typed' }) as string
const out: Echoed = { text: said }
function twice<T>(x: T): T[] { return [x, x] }
return twice<Echoed>(out)`,
      )
      expect(r).toEqual({ text: '[{"text":"typed"},{"text":"typed"}]', isError: false })
      // Lines still count from the code's first: the stripper keeps every position.
      const thrown = await runCode(client, "const n: number = 1\nthrow new Error('at two')")
      expect(thrown).toEqual({ text: 'Error: at two\n    at code.js:2:7', isError: true })
    })
  },
)
