import { defineConfig } from 'vitest/config'
import RecordedSequencer from './tests/helpers/sequencer.js'

/**
 * `npm test`: the loop a developer runs after every change, at most 90
 * seconds of vitest on two cores (CONTRIBUTING.md, "Keeping the suite
 * fast"): the unit and in-process tiers, and the e2e cases of the bundle
 * that take a moment. The slow suites (`*.slow.test.ts`: the long e2e flows
 * under terminals and real clients, conformance runs, the long soak, load
 * and restart timing, the reference servers, the executables) run with
 * `npm run test:slow` (vitest.slow.config.ts).
 */
// Node reads the certificates NODE_EXTRA_CA_CERTS names at every start: about
// 70 ms of CPU a process on this two-core machine, where CI images often set
// it, and one run starts well over a thousand Node processes (fixture
// servers, the bundle, scripts), none of which makes a TLS connection beyond
// the test. Workers and every process they start inherit the environment
// without it; tests/inspect/doctor.test.ts gives doctor the variable itself.
delete process.env.NODE_EXTRA_CA_CERTS

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'tests/**/*.slow.test.ts'],
    // Rebuilds build/myc.cjs when src/ is newer, so a focused run never tests stale code;
    // bundles the SDK the fixture servers load (tests/helpers/fixture-sdk.ts).
    globalSetup: ['tests/helpers/temp-root.ts', 'tests/helpers/fresh-bundle.ts', 'tests/helpers/fixture-sdk.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here and in CI, and most of a test's time is spent waiting on
    // the processes it starts, so more workers than cores fill it: on an idle
    // fresh clone six gave 94.5 s of vitest against 110 s with four (2026-11-29).
    // One project, so that the e2e files run in the same workers instead of
    // six more of their own (each loads src/ and the SDKs: ~1.5 s of CPU).
    maxWorkers: 6,
    // Files share their worker's module cache instead of importing src/ and
    // the SDKs afresh each (isolate: false): 142-143 s of vitest against
    // 157 s isolated, on the same machine (2026-11-25, all green). No test
    // sets process-wide state (environment variables, globals) for another:
    // e2e tests give children their env explicitly.
    isolate: false,
    // The longest files first on a fresh clone too, from tests/durations.json (`npm run test:durations`).
    sequence: { sequencer: RecordedSequencer },
  },
})
