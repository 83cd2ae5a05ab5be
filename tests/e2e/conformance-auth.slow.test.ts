import { describe, expect, it } from 'vitest'
import { authScenarios, runScenario } from '../conformance/run-auth.js'
import { NodeUnavailableError, node22, REVISIONS } from '../conformance/run.js'

/**
 * The official conformance suite's client auth scenarios with myc as the
 * client (tests/conformance/run-auth.ts: `myc auth login --no-browser`, the
 * URL followed, then the tools through `myc serve`), for every requirement
 * set. With @modelcontextprotocol/conformance 0.2.0-alpha.12 each revision
 * requires at least these many (14 and 25 when written); a lower count means
 * the runner changed: look before lowering it.
 */
const MIN_SCENARIOS: Record<(typeof REVISIONS)[number], number> = { '2025-11-25': 14, '2026-07-28': 25 }

describe('MCP conformance client auth scenarios with myc as the client', () => {
  it('passes every auth scenario each revision requires', async (ctx) => {
    let node: string
    try {
      node = await node22()
    } catch (error) {
      if (error instanceof NodeUnavailableError)
        ctx.skip(`the conformance runner needs Node ≥ 22, which could not be obtained: ${error.message}`)
      throw error
    }
    const failed: Record<string, string> = {}
    for (const revision of REVISIONS) {
      const scenarios = authScenarios(revision)
      expect(scenarios.length, `${revision}: auth scenarios in the requirement set`).toBeGreaterThanOrEqual(
        MIN_SCENARIOS[revision],
      )
      // Two at a time: each scenario is a runner, its servers and a myc.
      for (let i = 0; i < scenarios.length; i += 2) {
        const results = await Promise.all(scenarios.slice(i, i + 2).map((s) => runScenario(node, s, revision)))
        for (const r of results) {
          console.log(`${revision} ${r.ok ? 'pass' : 'FAIL'} ${r.scenario} ${r.summary}`)
          if (!r.ok) failed[`${revision} ${r.scenario}`] = r.summary
        }
      }
    }
    expect(failed, 'auth scenarios failing with myc as the client').toEqual({})
  }, 900_000)
})
