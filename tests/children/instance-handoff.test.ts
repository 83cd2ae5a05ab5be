import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { connectClient } from '../helpers/runtime.js'
import { callOk as call, perPersonEntry, scopedRuntime } from '../helpers/scoped.js'

/**
 * An instance stopped for good (idleMs, maxInstances, its person's secrets
 * changed) leaves the pool at once, and its folders are removed once its
 * process has ended; the person's next call may start their next instance
 * meanwhile, in the same folders (children/instances.ts). That one starts
 * once the last one's folders are gone, never to lose its own to them.
 */
describe('a person’s next instance, started while their last one stops', () => {
  let runtime: Runtime
  beforeAll(async () => {
    ;({ runtime } = await scopedRuntime(
      { gh: perPersonEntry() },
      { kept: { local: { github: 'o' }, alice: { github: 'a' } } },
    ))
  }, 30_000)
  afterAll(async () => {
    await runtime?.close()
  })

  it('keeps the folders it made: what it writes in its HOME is there after the last one is gone', async () => {
    const { client } = await connectClient(runtime, { owner: 'alice' })
    for (let round = 0; round < 3; round++) {
      await call(client, 'gh__remember', { value: `before ${round}` })
      // Her instance is stopped (idle: what a changed secret does); her next call comes at once.
      const stopping = runtime.supervisor.personChanged('alice')
      expect(await call(client, 'gh__remember', { value: `after ${round}` })).toBe('kept')
      await stopping
      expect(await call(client, 'gh__recall')).toEqual({ memory: `after ${round}`, file: `after ${round}` })
    }
    await client.close()
  }, 60_000)
})
