import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores here and in CI: spawning real child servers in many workers at
    // once only makes every test slower and flakier.
    maxWorkers: 2,
  },
})
