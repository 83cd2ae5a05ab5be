import { defineConfig } from 'vitest/config'

/**
 * `npm run test:slow`: every `*.slow.test.ts`, the suites too slow for the
 * everyday loop of `npm test`. Two groups, one after the other:
 *
 * - `e2e`: the bundle's own end-to-end cases that take seconds each
 *   (terminals under tmux, real clients, browsers, long CLI flows), several
 *   files at a time as `npm test` runs them;
 * - `serial`: the files below, one at a time, after the first group: they
 *   measure timing (restarts, the soak, load) or run Wine and the conformance
 *   runner, which starve each other on two cores (a Wine doctor run once
 *   printed nothing beside the auth scenarios).
 */
// As in vitest.config.ts: no process of the suite reads the CA certificates at its start.
delete process.env.NODE_EXTRA_CA_CERTS

const SERIAL = [
  'tests/build/executable.slow.test.ts',
  'tests/build/windows-executable.slow.test.ts',
  'tests/code/typescript.slow.test.ts',
  'tests/e2e/conformance-auth.slow.test.ts',
  'tests/e2e/conformance.slow.test.ts',
  'tests/e2e/hostile-soak.slow.test.ts',
  'tests/e2e/http-child-load.slow.test.ts',
  'tests/e2e/mcp-remote.slow.test.ts',
  'tests/e2e/memory-concurrency.slow.test.ts',
  'tests/e2e/modern-client-npm-servers.slow.test.ts',
  'tests/e2e/serve-npm-servers.slow.test.ts',
  'tests/e2e/tasks-legacy-child.slow.test.ts',
  'tests/server/crash-restart.slow.test.ts',
]

const shared = {
  globalSetup: ['tests/helpers/temp-root.ts', 'tests/helpers/fresh-bundle.ts', 'tests/helpers/fixture-sdk.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
}

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...shared,
          name: 'e2e',
          include: ['tests/**/*.slow.test.ts'],
          exclude: ['**/node_modules/**', ...SERIAL],
          // Files share their worker's module cache, as in `npm test` (vitest.config.ts).
          isolate: false,
          maxWorkers: 4,
          sequence: { groupOrder: 0 },
        },
      },
      { test: { ...shared, name: 'serial', include: SERIAL, maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
})
