import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createLogger } from '../src/logger.js'

/** A logger writing to a stream of its own (a terminal when `tty`), and what it wrote. */
function capture(options: { tty?: boolean; verbose?: boolean; env?: Record<string, string> } = {}) {
  const stream = Object.assign(new PassThrough(), { isTTY: options.tty === true }) as unknown as NodeJS.WriteStream
  let written = ''
  stream.on('data', (chunk: Buffer) => (written += chunk.toString()))
  const logger = createLogger({ stream, env: options.env ?? {}, verbose: options.verbose === true })
  return { logger, written: () => written }
}

describe('the logger: one line per entry, in the style of every command’s error (myc: …)', () => {
  it('writes `myc: [level: ][tag: ]text`, one line each, no badge and no blank lines, in a pipe', () => {
    const { logger, written } = capture()
    logger.error('boom')
    logger.warn('careful', 3)
    logger.info('hello')
    logger.withTag('fs').error(new Error('child died'))
    logger.withTag('fs').info('restarting')
    expect(written()).toBe(
      [
        'myc: error: boom',
        'myc: warning: careful 3',
        'myc: hello',
        'myc: error: fs: child died',
        'myc: fs: restarting',
        '',
      ].join('\n'),
    )
  })

  it('colours only the level word, and only where the stream may have colour', () => {
    const tty = capture({ tty: true })
    tty.logger.error('boom')
    expect(tty.written()).toBe('myc: \u001b[31merror:\u001b[39m boom\n')
    const forced = capture({ env: { FORCE_COLOR: '1' } })
    forced.logger.warn('careful')
    expect(forced.written()).toBe('myc: \u001b[33mwarning:\u001b[39m careful\n')
    const off = capture({ tty: true, env: { NO_COLOR: '1' } })
    off.logger.error('boom')
    expect(off.written()).toBe('myc: error: boom\n')
  })

  it('an error’s stack only with --verbose, and debug lines only then', () => {
    const quiet = capture()
    quiet.logger.error(new Error('deep'))
    quiet.logger.debug('detail')
    expect(quiet.written()).toBe('myc: error: deep\n')
    const verbose = capture({ verbose: true })
    verbose.logger.error(new Error('deep'))
    verbose.logger.debug('detail')
    expect(verbose.written()).toMatch(/^myc: error: Error: deep\n {4}at .*\n[^]*myc: debug: detail\n$/)
  })
})
