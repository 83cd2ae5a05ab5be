import path from 'node:path'
import { PassThrough } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { StdioServerStream } from '../../src/protocol/stdio-server-transport.js'
import type { PrincipalView } from '../../src/principal/view.js'
import { visibleTools } from '../../src/runtime/principal-tools.js'
import { visibleList } from '../../src/server/principal-requests.js'
import { StdioEraConnection } from '../../src/server/stdio-eras.js'
import { repoRoot } from '../helpers/fixtures.js'
import { PolicyHarness } from '../helpers/runtime.js'
import { eachLine } from '../helpers/stdio-lines.js'
import { clientFaces } from '../../src/eras/client-faces.js'

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

/** One stdio connection (either era, by its first message) over in-memory streams: send a request, get its answer. */
function connection(h: PolicyHarness, view: PrincipalView) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const answers = new Map<unknown, Record<string, unknown>>()
  eachLine(stdout, (line) => {
    const m = JSON.parse(line) as Record<string, unknown>
    if (m.method === undefined) answers.set(m.id, m)
  })
  const conn = new StdioEraConnection({ runtime: h.runtime, faces: clientFaces(), view, era: 'auto' })
  void conn.connect(new StdioServerStream(stdin, stdout))
  let next = 0
  return {
    async request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
      const id = `r${++next}`
      stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
      const deadline = Date.now() + 10_000
      while (!answers.has(id)) {
        if (Date.now() > deadline) throw new Error(`no answer to ${method}`)
        await new Promise((r) => setTimeout(r, 5))
      }
      const answer = answers.get(id)!
      if (answer.error) throw new Error(`${method}: ${JSON.stringify(answer.error)}`)
      return answer.result as Record<string, unknown>
    },
    close: () => stdin.end(),
  }
}

const names = (list: unknown) =>
  (list as Array<{ name?: string; uri?: string; uriTemplate?: string }>)
    .map((x) => x.name ?? x.uri ?? x.uriTemplate ?? '')
    .sort()

/**
 * One implementation of each decision: for the same principal, the 2025
 * session face, the 2026 stateless face and the agent see the same tools,
 * prompts and resources, and are offered the same capabilities (but for
 * tasks, which each era says its own way).
 */
describe('the faces agree for one principal', () => {
  const h = new PolicyHarness(() =>
    loadConfig({ cwd: path.join(repoRoot, 'tests/fixtures/policy/basic'), env: process.env }),
  )
  beforeAll(() => h.start())
  afterAll(() => h.close())

  for (const [role, skills] of [
    ['developer', ['writer']],
    ['guest', []],
    ['lead', ['writer', 'reader']],
  ] as const) {
    it(`role ${role} with skills [${skills.join(', ')}]`, async () => {
      const view = await h.view(role, { skills: [...skills] })
      const legacy = connection(h, view)
      const init = await legacy.request('initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'legacy', version: '1' },
      })
      const modern = connection(h, view)
      const discover = await modern.request('server/discover', { _meta: ENVELOPE })

      const legacyTools = names((await legacy.request('tools/list')).tools)
      const modernTools = names((await modern.request('tools/list', { _meta: ENVELOPE })).tools)
      const agentTools = visibleTools(h.runtime, view)
        .map((t) => t.wireName)
        .sort()
      expect(legacyTools.length).toBeGreaterThan(0)
      // The 2026 face has no escalation: activate_skill there is a step-up, and deactivate_skill does not exist.
      const escalation = (n: string) => /__(deactivate_skill)$/.test(n)
      expect(modernTools.filter((n) => !escalation(n))).toEqual(legacyTools.filter((n) => !escalation(n)))
      expect(agentTools).toEqual(legacyTools)
      // The walk a client's list changes are judged by is what the faces list.
      expect(names(visibleList(h.runtime, view, 'tools'))).toEqual(legacyTools)
      expect(names(visibleList(h.runtime, view, 'prompts'))).toEqual(
        names((await legacy.request('prompts/list')).prompts ?? []),
      )
      const listedResources = [
        ...names((await legacy.request('resources/list')).resources ?? []),
        ...names((await legacy.request('resources/templates/list')).resourceTemplates ?? []),
      ]
      expect(names(visibleList(h.runtime, view, 'resources'))).toEqual(expect.arrayContaining(listedResources))

      for (const list of ['prompts/list', 'resources/list', 'resources/templates/list']) {
        const key = list === 'prompts/list' ? 'prompts' : list === 'resources/list' ? 'resources' : 'resourceTemplates'
        expect(names((await modern.request(list, { _meta: ENVELOPE }))[key] ?? []), list).toEqual(
          names((await legacy.request(list))[key] ?? []),
        )
      }

      const common = (caps: Record<string, unknown>) => {
        const { tasks: _tasks, extensions, ...rest } = caps as { tasks?: unknown; extensions?: Record<string, unknown> }
        const { 'io.modelcontextprotocol/tasks': _ext, ...otherExtensions } = extensions ?? {}
        return { ...rest, extensions: otherExtensions }
      }
      expect(common(discover.capabilities as Record<string, unknown>)).toEqual(
        common(init.capabilities as Record<string, unknown>),
      )
      legacy.close()
      modern.close()
    })
  }
})
