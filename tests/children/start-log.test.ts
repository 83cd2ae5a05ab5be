import { describe, expect, it } from 'vitest'
import { captureLogger, startRuntime } from '../helpers/runtime.js'

/** What the log says of a child that fails to start, in the order it happened. */
describe('a child that fails to start', () => {
  it('is logged as failed before its restart is planned, once', async () => {
    const { logger, lines } = captureLogger()
    const runtime = await startRuntime(
      {
        mcpServers: {
          broken: { command: 'sh', args: ['-c', 'exit 3'], restart: { maxRetries: 2, initialDelayMs: 600_000 } },
        },
      },
      logger,
    )
    try {
      const failed = lines.findIndex((l) => /^\[broken\] could not start: .*exited with code 3/.test(l))
      const planned = lines.findIndex((l) => /^\[broken\] restarting in \d+ ms \(attempt 1 of 2\)/.test(l))
      expect(failed, lines.join('\n')).toBeGreaterThanOrEqual(0)
      expect(planned, lines.join('\n')).toBeGreaterThan(failed)
      // Said once: the start's own rejection adds nothing.
      expect(
        lines.filter((l) => /could not start|failed to start/.test(l)),
        lines.join('\n'),
      ).toHaveLength(1)
    } finally {
      await runtime.close()
    }
  })

  it('says why, then that it gives up, when it may not restart', async () => {
    const { logger, lines } = captureLogger()
    const runtime = await startRuntime(
      { mcpServers: { broken: { command: 'sh', args: ['-c', 'exit 3'], restart: { maxRetries: 0 } } } },
      logger,
    )
    try {
      const said = lines.filter((l) => l.startsWith('[broken]') && !l.includes('→'))
      expect(said).toEqual([
        expect.stringMatching(/^\[broken\] could not start: .*exited with code 3/),
        '[broken] giving up after 0 restarts',
      ])
    } finally {
      await runtime.close()
    }
  })
})
