import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import tempRoot from './helpers/temp-root.js'

/** The suite's own temp folder (tests/helpers/temp-root.ts): what tests make in tmpdir() goes with the run. */
describe('the test run temp folder', () => {
  it("is this worker's tmpdir()", () => {
    expect(path.basename(path.dirname(path.join(tmpdir(), 'x')))).toMatch(/^myc-test-run-/)
  })

  it('is removed at the end with all it holds, and TMPDIR is as before', () => {
    const before = process.env.TMPDIR
    const end = tempRoot()
    const root = tmpdir()
    expect(root).not.toBe(before)
    mkdirSync(path.join(root, 'case', 'deep'), { recursive: true })
    writeFileSync(path.join(root, 'case', 'deep', 'file'), 'left behind')
    end()
    expect(existsSync(root)).toBe(false)
    expect(process.env.TMPDIR).toBe(before)
  })
})
