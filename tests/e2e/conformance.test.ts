import { describe, expect, it } from 'vitest'
import { formatReport, NodeUnavailableError, node22, passes, runConformance, type ConformanceReport } from '../conformance/run.js'

/**
 * Server scenarios of the official conformance suite passing straight
 * against tests/fixtures/servers/conformance.mjs when this was written (the
 * 30 scored by `--requirements 2025-11-25` and the 3 it runs unscored, with
 * @modelcontextprotocol/conformance 0.2.0-alpha.12). A lower count means the
 * fixture or the runner changed: look before lowering it.
 */
const MIN_DIRECT_PASSING = 33

/**
 * The MCP conformance suite, straight against the test server and through
 * `build/myc.cjs serve --http` with it as an unprefixed child: whatever passes
 * straight must pass through myc. Runs tests/conformance/run.ts (npm run
 * conformance) in-process; the runner itself needs Node ≥ 22 (fetched from
 * the npm registry when this is an older Node).
 */
describe('MCP conformance server scenarios, direct and through myc serve --http', () => {
  it('passes directly what it passed when written, and through myc everything that passes directly', async (ctx) => {
    try {
      await node22()
    } catch (error) {
      if (error instanceof NodeUnavailableError) ctx.skip(`the conformance runner needs Node ≥ 22, which could not be obtained: ${error.message}`)
      throw error
    }
    const report: ConformanceReport = await runConformance()
    // Printed so a failure shows both tables.
    console.log(formatReport(report))

    const table = (results: ConformanceReport['direct']['results']) => Object.fromEntries(results.map((r) => [r.scenario, r.status]))
    const directPassing = report.direct.results.filter(passes).map((r) => r.scenario)
    expect(directPassing.length, `direct results:\n${JSON.stringify(table(report.direct.results), null, 2)}`).toBeGreaterThanOrEqual(MIN_DIRECT_PASSING)

    expect(report.mycError).toBeUndefined()
    const myc = new Map((report.myc?.results ?? []).map((r) => [r.scenario, r]))
    const notThroughMyc = Object.fromEntries(
      directPassing
        .filter((s) => !passes(myc.get(s)))
        .map((s) => [s, myc.get(s)?.checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`) ?? 'not run']),
    )
    expect(notThroughMyc).toEqual({})
  }, 600_000)
})
