import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentEvent } from '../../src/agent/events.js'
import { runAgentCli, type AgentRun } from '../helpers/agent.js'
import { writeConfig } from '../helpers/e2e.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureEntry } from '../helpers/runtime.js'
import { waitFor } from '../helpers/wait-for.js'

// The program's own part of myc run: a real SIGINT. Everything else it does
// is tested in this process (tests/commands/run.test.ts).

const openConfig = writeConfig({ mcpServers: { echo: fixtureEntry('echo') } })
const last = (r: AgentRun) => r.events.at(-1) as Extract<AgentEvent, { type: 'session_end' }>

describe('myc run (build/myc.cjs): signals', () => {
  const fake = new FakeAnthropic()
  beforeAll(async () => {
    await fake.start()
  })
  afterAll(async () => {
    await fake.close()
  })

  it('ends the current request on SIGINT, still writes session_end, and exits 130', async () => {
    // A reply that does not come while the test runs: only the interrupt can end the run.
    fake.setScript(() => ({ content: [{ type: 'text', text: 'too late' }], delayMs: 600_000 }))
    const requests = fake.requests.length
    const abandoned = fake.abandoned
    let signalled = false
    const r = await runAgentCli(['run', 'slow', '--json', '--config', openConfig], {
      fake,
      onStdout: (text, child) => {
        if (signalled || !text.includes('"session_start"')) return
        signalled = true
        // Once the request is in flight, interrupt.
        void waitFor(() => fake.requests.length > requests, 20_000, 'the request').then(() => child.kill('SIGINT'))
      },
    })
    expect(r.code).toBe(130)
    expect(last(r)).toMatchObject({ type: 'session_end', ok: false, reason: 'interrupted', exitCode: 130 })
    // The request in flight was cancelled, not waited for.
    await waitFor(() => fake.abandoned > abandoned, 10_000, 'the fake to see the request cancelled')
  }, 30_000)
})
