import type { Server } from 'node:http'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AuditInstance } from '../../src/audit.js'
import { openView, type PrincipalView } from '../../src/principal/view.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { openTracing } from '../../src/telemetry/open-tracing.js'
import { OtlpReceiver } from '../helpers/otlp-receiver.js'
import { connectClient, waitFor } from '../helpers/runtime.js'
import { peopleFace, perPersonEntry, personClient, scopedRuntime, whoami } from '../helpers/scoped.js'

type Recorded = { name: string; instance?: AuditInstance }

/**
 * Which instance served a call is on record (docs/team.md): the audit log's
 * `tool_call` names it, and so do the call's spans. Over stdio the one
 * person is whoever runs myc: the scoped server's own process is theirs.
 */
describe('the instance that served a call, in the audit log and the spans', () => {
  let runtime: Runtime
  let receiver: OtlpReceiver
  let server: Server
  const records: Recorded[] = []
  const open: Client[] = []
  const audited = (): PrincipalView => Object.assign(openView(), { recordCall: (r: Recorded) => records.push(r) })

  beforeAll(async () => {
    receiver = new OtlpReceiver()
    await receiver.start()
    const tracing = await openTracing({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
      config: undefined,
      version: '0.0.0-test',
      warn: () => {},
    })
    ;({ runtime } = await scopedRuntime(
      { gh: perPersonEntry() },
      { kept: { local: { github: 'operator' }, alice: { github: 'a' } }, tracing: tracing! },
    ))
    ;({ server } = await peopleFace(runtime, { viewFor: audited }).then(async (f) => {
      const { client } = await personClient(f.url, 'alice')
      open.push(client)
      return f
    }))
  }, 30_000)
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close().catch(() => {})))
    server?.close()
    await runtime?.close()
    await receiver?.close()
  })

  it('names a person’s instance, with its process, in the audit record and on the call’s span', async () => {
    const { pid } = await whoami(open[0]!)
    expect(records.at(-1)).toEqual(
      expect.objectContaining({
        name: 'gh__whoami',
        instance: { scope: 'principal', principal: 'alice', pid: expect.any(Number) },
      }),
    )
    expect(runtime.supervisor.instances()[0]!.pid).toBe(records.at(-1)!.instance!.pid)
    expect(pid).toBeGreaterThan(0)
    await waitFor(() => receiver.spans.some((s) => s.name === 'tools/call gh__whoami'), 10_000, 'the call’s span')
    const span = receiver.spans.find((s) => s.name === 'tools/call gh__whoami')!
    expect(span.attributes).toMatchObject({
      'mycelium.instance.scope': 'principal',
      'mycelium.instance.principal': 'alice',
      'mycelium.instance.pid': records.at(-1)!.instance!.pid,
    })
  })

  it('serves the one person on stdio from the server’s own process, their instance', async () => {
    const { client } = await connectClient(runtime, { view: audited() })
    open.push(client)
    const me = await whoami(client)
    const own = runtime.supervisor.children.get('gh')!
    expect(me.pid).toBe(own.pid)
    expect(me.secret).toBe('operator')
    expect(records.at(-1)!.instance).toEqual({ scope: 'principal', principal: 'local', pid: own.pid })
  })
})
