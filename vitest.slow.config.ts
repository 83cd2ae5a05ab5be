import { defineConfig } from 'vitest/config'

/** `npm run test:slow`: the suites too slow for the everyday loop (conformance, the long soak, load and restart timing, the reference servers, the executables). */
export default defineConfig({
  test: {
    include: ['tests/**/*.slow.test.ts'],
    globalSetup: ['tests/helpers/fresh-bundle.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // One file at a time: these measure timing (restarts, the soak) and run
    // Wine and the conformance runner, which starve each other on two cores
    // (a Wine doctor run once printed nothing beside the auth scenarios).
    maxWorkers: 1,
  },
})
