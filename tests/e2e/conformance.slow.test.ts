import { describe, expect, it } from 'vitest'
import {
  CHILD_ERAS,
  formatReport,
  NodeUnavailableError,
  node22,
  passes,
  requiredScenarios,
  runConformance,
  type ChildEra,
  type ConformanceReport,
  type Revision,
  type ThroughMyc,
} from '../conformance/run.js'

/**
 * Server scenarios of the official conformance suite passing straight
 * against tests/fixtures/servers/conformance.mjs when this was written, with
 * @modelcontextprotocol/conformance 0.2.0-alpha.12. A lower count means the
 * fixture or the runner changed: look before lowering it.
 *
 * - 2025-11-25: the 30 scored and the 3 run unscored (33/33).
 * - 2026-07-28: the 37 scored and the 13 run unscored (50/50: the tasks
 *   extension, SEP-2663; json-schema-2020-12; the SEP-2243 header checks).
 *   tasks-status-notifications passes with no checks at all (notifications
 *   are optional and the fixture sends none).
 */
const MIN_DIRECT_PASSING: Record<Revision, number> = { '2025-11-25': 33, '2026-07-28': 50 }

/** Every scenario that passes directly must pass through myc. */
const ALL = 'every scenario passing directly'

/**
 * What must pass through `myc serve --http`, per revision and per era myc
 * speaks with the child (`legacy`: myc's default, the 2025 handshake; `auto`:
 * server/discover, so 2026-07-28 with this fixture). Where the eras differ,
 * myc has to bridge them (docs/protocol-eras.md): a 2026 child's
 * input_required asked of a 2025 client, a 2025 child's questions parked as
 * a 2026 client's input_required. The listed scenarios are those passing
 * through myc; the rest are printed in the tables, not asserted. Add a scenario when it starts
 * passing; never remove one without a reason written next to it.
 */
/** What must pass: all that passes directly, all of it but some, or a list. */
type MustPass = typeof ALL | { allBut: readonly string[] } | readonly string[]

const MUST_PASS_THROUGH_MYC: Record<Revision, Record<ChildEra, MustPass>> = {
  '2025-11-25': {
    // Same era on both sides: the guarantee the suite started with.
    legacy: ALL,
    // A 2026 child under a 2025 client. tools-call-sampling,
    // tools-call-elicitation, elicitation-sep1034-defaults and
    // elicitation-sep1330-enums pass through the bridge (the child answers
    // input_required; myc asks the 2025 client with the real requests and
    // retries the child); resources-subscribe/-unsubscribe through the
    // child's subscriptions/listen, which names the resources clients
    // subscribed to (2026 has no resources/subscribe).
    auto: ALL,
  },
  '2026-07-28': {
    // A 2025 child under a 2026 client. The child's questions during a call
    // (elicitation/create, sampling/createMessage, roots/list) park the call:
    // myc answers input_required with them and completes the call on the
    // retry (src/eras/face/parked-calls.ts); questions the request did not
    // declare a capability for get a stand-in answer (a decline, no roots),
    // so the client is asked only what it declared. The fixture's 2025 side
    // has 2025-11-25 core tasks, which myc maps onto the tasks extension
    // (src/eras/face/hosted-tasks.ts). Not passing, with the reason:
    legacy: {
      allBut: [
        // Its first check wants the key `user_name`, the name the fixture's
        // code gives its question. The key exists only inside the child: a
        // 2025 child asks with a bare elicitation/create, which carries no
        // key on the wire, so myc has to name it (`elicitation_1`). The rest
        // of the scenario passes.
        'input-required-result-basic-elicitation',
      ],
    },
    // 2026 on both sides: the child sees the caller's own capabilities in
    // the envelope; the tasks extension passes (the child creates the tasks,
    // myc routes tasks/* to it for the credential that created each,
    // src/eras/face/task-routing.ts).
    auto: ALL,
  },
}

/** Each failing check of a scenario through one myc, or why it has none. */
function failures(m: ThroughMyc, scenario: string): string[] | string {
  const r = m.run?.results.find((x) => x.scenario === scenario)
  return r
    ? r.checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`)
    : (m.error ?? 'not run')
}

/**
 * The MCP conformance suite for both spec revisions, straight against the
 * both-era test server and through `build/myc.cjs serve --http` with it as an
 * unprefixed stdio child, spoken to in each era (CHILD_ERAS). Directly: at
 * least what passed when written. Through myc: what MUST_PASS_THROUGH_MYC
 * says; everything else is printed. Runs tests/conformance/run.ts (npm run
 * conformance) in-process; the runner itself needs Node ≥ 22 (fetched from
 * the npm registry when this is an older Node).
 */
describe('MCP conformance server scenarios, direct and through myc serve --http', () => {
  it('passes directly what it passed when written, and through myc what each revision and child era must', async (ctx) => {
    try {
      await node22()
    } catch (error) {
      if (error instanceof NodeUnavailableError)
        ctx.skip(`the conformance runner needs Node ≥ 22, which could not be obtained: ${error.message}`)
      throw error
    }
    const reports = await runConformance()
    // Printed so a reader (and a failure) sees every table: both revisions, direct and through myc.
    for (const report of reports) console.log(formatReport(report))
    const table = (results: ConformanceReport['direct']['results']) =>
      Object.fromEntries(results.map((r) => [r.scenario, r.status]))

    for (const report of reports) {
      const revision = report.requirements
      const directPassing = report.direct.results.filter(passes).map((r) => r.scenario)
      expect(
        directPassing.length,
        `${revision} direct results:\n${JSON.stringify(table(report.direct.results), null, 2)}`,
      ).toBeGreaterThanOrEqual(MIN_DIRECT_PASSING[revision])
      const scoredFailing = requiredScenarios(revision).scored.filter((s) => !directPassing.includes(s))
      expect(scoredFailing, `${revision}: scored scenarios failing straight against the fixture`).toEqual([])

      expect(report.myc.map((m) => m.childEra)).toEqual([...CHILD_ERAS])
      for (const m of report.myc) {
        expect(m.error, `${revision}, through myc (${m.childEra} child)`).toBeUndefined()
        const by = new Map((m.run?.results ?? []).map((r) => [r.scenario, r]))
        const must = MUST_PASS_THROUGH_MYC[revision][m.childEra]
        const required =
          must === ALL ? directPassing : 'allBut' in must ? directPassing.filter((s) => !must.allBut.includes(s)) : must
        console.log(
          `${revision}, through myc (${m.childEra} child): ${[...by.values()].filter(passes).length}/${by.size} passing; ` +
            `passing directly but not through myc${must === ALL ? '' : ' (asserted only when listed)'}: ${m.regressions.map((r) => r.scenario).join(', ') || 'none'}`,
        )
        const failing = required.filter((s) => !passes(by.get(s)))
        expect(
          Object.fromEntries(failing.map((s) => [s, failures(m, s)])),
          `${revision}, through myc (${m.childEra} child): scenarios that must pass`,
        ).toEqual({})
      }
    }
  }, 900_000)
})
