import { defineConfig } from 'vitest/config'

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

const shared = {
  exclude: ['**/node_modules/**', 'tests/**/*.slow.test.ts'],
  // Rebuilds build/myc.cjs when src/ is newer, so a focused run never tests stale code.
  globalSetup: ['tests/helpers/fresh-bundle.ts', 'tests/helpers/fixture-sdk.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
}

export default defineConfig({
  test: {
    // Two cores here and in CI. Most e2e time is spent waiting on child
    // processes, so more workers than cores fill it: with isolated files a
    // third worker gave 131-133 s against 144 s with two, and a fourth only
    // slowed each test; with the shared module cache below, four give
    // 134-141 s against 149 s with three (2026-11-25, all green; npm test 2m19s).
    maxWorkers: 4,
    // Files share their worker's module cache instead of importing src/ and
    // the SDKs afresh each (isolate: false): 142-143 s of vitest against
    // 157 s isolated, on the same machine (2026-11-25, all green). No test
    // sets process-wide state (environment variables, globals) for another:
    // e2e tests give children their env explicitly.
    projects: [
      {
        test: {
          ...shared,
          name: 'unit',
          include: ['tests/**/*.test.ts'],
          exclude: [...shared.exclude, 'tests/e2e/**'],
          isolate: false,
        },
      },
      { test: { ...shared, name: 'e2e', include: ['tests/e2e/**/*.test.ts'], isolate: false } },
    ],
  },
})
