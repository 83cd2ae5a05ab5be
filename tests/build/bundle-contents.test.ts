import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { requireBundle } from '../helpers/e2e.js'
import { repoRoot } from '../helpers/fixtures.js'

/**
 * The heavy libraries only some runs use travel gzipped inside build/myc.cjs
 * and are compiled on first use (src/agent/anthropic-sdk.ts,
 * src/http/http-deps.ts, src/markdown-html.ts): the bundle must never require them by name (the
 * npm package has no dependencies to find them in), and their code must not
 * be parsed on every start.
 */
describe('build/myc-main.cjs (the bundle build/myc.cjs launches)', () => {
  it('never requires the embedded libraries by name, and does not carry them as plain code', () => {
    requireBundle()
    const text = readFileSync(path.join(repoRoot, 'build/myc-main.cjs'), 'utf8')
    for (const lib of ['jose', 'redis', '@anthropic-ai/sdk', '@opentelemetry', 'marked'])
      expect(text).not.toMatch(new RegExp(`require\\(["']${lib.replace('/', '\\/')}[^"']*["']\\)`))
    // Tell-tale names from each library's code: present only inside the gzipped text.
    for (const marker of [
      'JWSSignatureVerificationFailed',
      'enforcePrometheusNamingConvention',
      'RedisClientMultiCommand',
      'BaseAnthropic_apiKeyFunction',
      'BatchSpanProcessorBase',
      'OTLPExporterBase',
      'MetricStorageRegistry',
      'OTLPMetricExporterBase',
      'emStrongLDelim',
    ])
      expect(text, marker).not.toContain(marker)
  })

  it('is ASCII only: one other character would make Node hold its whole source as a two-byte string', () => {
    requireBundle()
    const text = readFileSync(path.join(repoRoot, 'build/myc-main.cjs'), 'utf8')
    const other = /[^\x00-\x7f]/.exec(text)
    const where = other ? `${JSON.stringify(other[0])} in …${text.slice(other.index - 60, other.index + 20)}…` : ''
    expect(where, 'write it as an escape in the source, or find the library that brings it').toBe('')
  })
})
