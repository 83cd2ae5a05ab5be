import { describe, expect, it } from 'vitest'
import { decideApproval, RiskClassifier, type ApprovalMemory } from '../../src/agent/risk.js'
import { parsePattern } from '../../src/policy/patterns.js'

const context = { separator: '__', servers: new Set(['fs', 'db', 'web', 'mycelium']) }
const none = new RiskClassifier([], context)

describe('RiskClassifier', () => {
  it.each([
    // server, tool, annotations, level, source
    ['mycelium', 'exec', undefined, 'critical', 'builtin'],
    ['mycelium', 'run_script', undefined, 'critical', 'builtin'],
    ['mycelium', 'list_skills', undefined, 'low', 'builtin'],
    ['fs', 'read_file', { readOnlyHint: true }, 'low', 'annotations'],
    ['fs', 'purge', { destructiveHint: true }, 'high', 'annotations'],
    ['web', 'lookup', { openWorldHint: true }, 'medium', 'annotations'],
    // destructive wins over read-only when a server says both
    ['fs', 'odd', { readOnlyHint: true, destructiveHint: true }, 'high', 'annotations'],
    // annotations beat the name table
    ['fs', 'write_file', { readOnlyHint: true }, 'low', 'annotations'],
    ['fs', 'run_shell', undefined, 'critical', 'name'],
    ['fs', 'bash', undefined, 'critical', 'name'],
    ['fs', 'write_file', undefined, 'high', 'name'],
    ['db', 'query_database', undefined, 'high', 'name'],
    ['fs', 'move_file', undefined, 'high', 'name'],
    ['web', 'fetch_url', undefined, 'medium', 'name'],
    ['fs', 'read_text_file', undefined, 'low', 'name'],
    ['fs', 'list_directory', undefined, 'low', 'name'],
    // whole words only: "format" is no "rm", "shelf" no "shell"
    ['fs', 'format_text', undefined, 'low', 'name'],
    ['fs', 'list_shelf', undefined, 'low', 'name'],
    ['fs', 'writeFile', undefined, 'high', 'name'],
    ['fs', 'executeCommand', undefined, 'critical', 'name'],
  ] as const)('%s:%s %j → %s (%s)', (server, tool, annotations, level, source) => {
    expect(none.classify(server, tool, annotations)).toEqual({ level, source })
  })

  it('lets configured rules win, the highest matching one first', () => {
    const c = new RiskClassifier(
      [
        { pattern: 'fs:read_*', level: 'medium' },
        { pattern: 'fs__read_secret', level: 'critical' },
        { pattern: 'mycelium:exec', level: 'high' },
      ],
      context,
    )
    expect(c.classify('fs', 'read_file', { readOnlyHint: true })).toEqual({ level: 'medium', source: 'config' })
    expect(c.classify('fs', 'read_secret')).toEqual({ level: 'critical', source: 'config' })
    expect(c.classify('mycelium', 'exec')).toEqual({ level: 'high', source: 'config' })
    expect(c.classify('fs', 'write_file')).toEqual({ level: 'high', source: 'name' })
  })

  it('names the bad pattern of a rule', () => {
    expect(() => new RiskClassifier([{ pattern: 'fs:', level: 'high' }], context)).toThrow(/agent\.risk: pattern "fs:"/)
  })
})

describe('decideApproval', () => {
  const memory: ApprovalMemory = { always: new Set(), never: new Set() }
  const base = {
    id: 'fs:write_file',
    server: 'fs',
    tool: 'write_file',
    threshold: 'high' as const,
    memory,
    preapproved: [],
    interactive: false,
  }

  it('runs what is below the threshold, asks a person for the rest, and denies without a terminal', () => {
    expect(decideApproval({ ...base, level: 'medium' })).toMatchObject({ action: 'allow' })
    expect(decideApproval({ ...base, level: 'high', interactive: true })).toEqual({ action: 'ask' })
    const denied = decideApproval({ ...base, level: 'critical' })
    expect(denied).toMatchObject({ action: 'deny' })
    expect((denied as { why: string }).why).toMatch(/--approve critical or --approve fs:write_file/)
  })

  it('takes --approve levels (that level and below) and patterns', () => {
    expect(decideApproval({ ...base, level: 'high', preapproved: [{ level: 'high' }] })).toMatchObject({
      action: 'allow',
    })
    expect(decideApproval({ ...base, level: 'critical', preapproved: [{ level: 'high' }] })).toMatchObject({
      action: 'deny',
    })
    const pattern = parsePattern('fs:write_*', context)
    if (!pattern.ok) throw new Error(pattern.error)
    expect(decideApproval({ ...base, level: 'critical', preapproved: [{ pattern: pattern.pattern }] })).toMatchObject({
      action: 'allow',
    })
  })

  it('remembers always and never for the session; never wins even below the threshold', () => {
    expect(
      decideApproval({
        ...base,
        level: 'critical',
        interactive: true,
        memory: { always: new Set(['fs:write_file']), never: new Set() },
      }),
    ).toMatchObject({ action: 'allow' })
    expect(
      decideApproval({
        ...base,
        level: 'low',
        interactive: true,
        memory: { always: new Set(), never: new Set(['fs:write_file']) },
      }),
    ).toMatchObject({ action: 'deny' })
  })
})
