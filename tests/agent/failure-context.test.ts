import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  CONTEXT_OUTPUT_CAP,
  contextPrompt,
  readFailureContext,
  writeFailureContext,
} from '../../src/agent/failure-context.js'

const base = {
  skillId: 'deploy',
  scriptPath: 'scripts/deploy.sh',
  args: ['--prod'],
  exitCode: 2,
  stdout: 'out',
  stderr: 'boom',
  conversationSummary: 'ran the deploy',
}

describe('failure context files', () => {
  it('round-trips through .mycelium/context/, capping long output to its end', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-ctx-'))
    const long = `${'x'.repeat(CONTEXT_OUTPUT_CAP)}THE END`
    const folder = path.join(dir, '.mycelium', 'context')
    const file = await writeFailureContext(folder, { ...base, stderr: long }, new Date('2026-11-23T08:00:00.000Z'))
    expect(path.dirname(file)).toBe(folder)
    const back = await readFailureContext(file)
    expect(back).toMatchObject({ version: 1, skillId: 'deploy', exitCode: 2, timestamp: '2026-11-23T08:00:00.000Z' })
    expect(back.stderr.endsWith('THE END')).toBe(true)
    expect(back.stderr).toMatch(/^\[… 7 characters cut …\]/)
    expect(contextPrompt(back)).toContain('Skill deploy ran scripts/deploy.sh --prod and it exited with 2')
  })

  it.each([
    ['not JSON', '{', /is not JSON/],
    [
      'a field missing',
      JSON.stringify({ ...base, version: 1, timestamp: '2026-11-23T08:00:00.000Z', skillId: undefined }),
      /skillId: /,
    ],
    [
      'a wrong type',
      JSON.stringify({ ...base, version: 1, timestamp: '2026-11-23T08:00:00.000Z', args: 'x' }),
      /args: /,
    ],
    [
      'an unknown key',
      JSON.stringify({ ...base, version: 1, timestamp: '2026-11-23T08:00:00.000Z', extra: 1 }),
      /extra/,
    ],
    ['another version', JSON.stringify({ ...base, version: 2, timestamp: '2026-11-23T08:00:00.000Z' }), /version: /],
  ])('refuses %s, naming the file and the field', async (_name, text, message) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-ctx-')), 'bad.json')
    writeFileSync(file, text)
    await expect(readFailureContext(file)).rejects.toThrow(message)
    await expect(readFailureContext(file)).rejects.toThrow(file)
  })

  it('says when the file cannot be read', async () => {
    await expect(readFailureContext('/nonexistent/ctx.json')).rejects.toThrow(
      /--context: cannot read \/nonexistent\/ctx\.json/,
    )
  })
})
