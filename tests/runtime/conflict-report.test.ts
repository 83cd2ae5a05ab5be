import { describe, expect, it } from 'vitest'
import type { Conflict } from '../../src/registry/catalogue.js'
import { ConflictReport } from '../../src/runtime/conflict-report.js'
import { captureLogger } from '../helpers/runtime.js'

const tool: Conflict = { kind: 'tool', name: 'a_b_c', kept: 'a:b_c', dropped: 'a_b:c' }
const resource: Conflict = { kind: 'resource', name: 'file:///x', kept: 'a', dropped: 'b' }

describe('ConflictReport', () => {
  it('tells each conflict once while it lasts, and again when it comes back', () => {
    const { logger, lines } = captureLogger()
    const report = new ConflictReport(logger)
    report.update([tool])
    report.update([tool])
    expect(lines).toEqual([
      'two tools would reach the client as "a_b_c": a:b_c and a_b:c; a_b:c is left out (rename a server key or change namespace.separator)',
    ])
    report.update([tool, resource])
    expect(lines.slice(1)).toEqual([
      'servers "a" and "b" both serve the resource file:///x; reads go to "a" (config order)',
    ])
    report.update([resource])
    report.update([tool, resource])
    expect(lines).toHaveLength(3)
    expect(lines[2]).toBe(lines[0])
  })

  it('says nothing when there is no conflict', () => {
    const { logger, lines } = captureLogger()
    new ConflictReport(logger).update([])
    expect(lines).toEqual([])
  })
})
