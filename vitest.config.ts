import { defineConfig } from 'vitest/config'

/**
 * `npm test`: the loop a developer runs after every change (under 2.5
 * minutes on two cores). The slow suites (`*.slow.test.ts`: conformance
 * runs, the long soak, load and restart timing, the reference servers, the
 * executables) run with `npm run test:slow`.
 */
export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'tests/**/*.slow.test.ts'],
    // Rebuilds build/myc.cjs when src/ is newer, so a focused run never tests stale code.
    globalSetup: ['tests/helpers/fresh-bundle.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here and in CI. Most e2e time is spent waiting on child
    // processes, so a third worker fills it: 131-133 s against 144 s with two
    // (two runs each, all green). More than three only makes every test
    // slower and flakier.
    maxWorkers: 3,
  },
})
