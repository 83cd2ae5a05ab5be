import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './helpers/fixtures.js'

/** A src/ tree of its own, to run a lint script on. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'myc-lint-'))
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, 'src', rel)), { recursive: true })
    writeFileSync(path.join(root, 'src', rel), text)
  }
  return root
}
/** A tests/ tree of its own, to run a lint script on. */
function testsTree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'myc-lint-'))
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, 'tests', rel)), { recursive: true })
    writeFileSync(path.join(root, 'tests', rel), text)
  }
  return root
}
const run = (script: string, root?: string) =>
  spawnSync(process.execPath, [path.join(repoRoot, 'scripts', script)], {
    encoding: 'utf8',
    env: { ...process.env, ...(root ? { MYC_LINT_ROOT: root } : {}) },
  })

describe('the checks of npm run lint', () => {
  // Each check passing on this repo is `npm run lint`'s own job (CI runs it before the tests);
  // here each one is shown to fail where it should, on a small tree of its own.
  it('npm run lint runs every check of scripts/', () => {
    const lint = (
      JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: { lint: string } }
    ).scripts.lint
    const checks = readdirSync(path.join(repoRoot, 'scripts')).filter((f) => /^check-.*\.mjs$/.test(f))
    expect(checks.length).toBeGreaterThanOrEqual(10)
    for (const check of checks) expect(lint, check).toContain(`node scripts/${check}`)
  })

  it('check-layers fails on an upward import, a file cycle and a folder cycle', () => {
    const upward = run(
      'check-layers.mjs',
      tree({ 'policy/a.ts': "import type { X } from '../server/b.js'\n", 'server/b.ts': 'export type X = 1\n' }),
    )
    expect(upward.status).toBe(1)
    expect(upward.stderr).toMatch(/upward import: policy\/a\.ts -> server\/b\.ts/)
    const cycle = run(
      'check-layers.mjs',
      tree({
        'policy/a.ts': "import { b } from './b.js'\nexport const a = 1\n",
        'policy/b.ts': "import { a } from './a.js'\nexport const b = a\n",
      }),
    )
    expect(cycle.stderr).toMatch(/file cycle: policy\/a\.ts, policy\/b\.ts/)
    const folders = run(
      'check-layers.mjs',
      tree({
        'policy/a.ts': "export { b } from '../skills/b.js'\n",
        'skills/b.ts': "export const b = 1\nexport { c } from '../policy/c.js'\n",
        'policy/c.ts': 'export const c = 1\n',
      }),
    )
    expect(folders.stderr).toMatch(/folder cycle: policy, skills/)
    const unknown = run(
      'check-layers.mjs',
      tree({ 'newroom/a.ts': 'export const a = 1\n', 'policy/b.ts': "import { a } from '../newroom/a.js'\n" }),
    )
    expect(unknown.stderr).toMatch(/src\/newroom\/ has no layer/)
    // A room's sub-folders are the room: a cycle of type imports through eras/ (children/ → eras/ → runtime/ → children/) is a folder cycle.
    const eras = run(
      'check-layers.mjs',
      tree({
        'runtime/a.ts': "import type { B } from '../children/b.js'\nexport type A = B\n",
        'children/b.ts': "import type { C } from '../eras/modern/c.js'\nexport type B = C\n",
        'eras/modern/c.ts': "import type { A } from '../../runtime/a.js'\nexport type C = A | 1\n",
        'eras/loose.ts': 'export const d = 1\n',
      }),
    )
    expect(eras.status).toBe(1)
    expect(eras.stderr).toMatch(/folder cycle: children, eras, runtime/)
    expect(eras.stderr).toMatch(/upward import: children\/b\.ts -> eras\/modern\/c\.ts/)
    expect(eras.stderr).not.toMatch(/loose/)
  })

  it('check-sizes fails on a file over 500 lines', () => {
    const big = run('check-sizes.mjs', tree({ 'policy/big.ts': 'export const x = 1\n'.repeat(501) }))
    expect(big.status).toBe(1)
    expect(big.stderr).toMatch(/src\/policy\/big\.ts has 501 lines/)
  })

  it('check-functions fails on a function over 80 lines', () => {
    const body = (name: string, lines: number) => `export function ${name}() {\n${'  void 0\n'.repeat(lines - 2)}}\n`
    const long = run('check-functions.mjs', tree({ 'policy/long.ts': body('fine', 80) + body('tooLong', 81) }))
    expect(long.status).toBe(1)
    expect(long.stderr.trim().split('\n')).toEqual([
      'check-functions: src/policy/long.ts: tooLong has 81 lines (at most 80): split it into named steps',
    ])
    // No function is listed any more: one that was (runChat) is held to 80 lines as any other.
    const grown = run('check-functions.mjs', tree({ 'agent/chat.ts': body('runChat', 81) }))
    expect(grown.stderr.trim()).toBe(
      'check-functions: src/agent/chat.ts: runChat has 81 lines (at most 80): split it into named steps',
    )
  })

  it('check-codes fails on a JSON-RPC code written as a number outside protocol/facts.ts', () => {
    const bare = run(
      'check-codes.mjs',
      tree({
        'server/a.ts': "// -32602 in a comment is fine\nexport const e = { code: -32602, message: 'x' }\n",
        'protocol/facts.ts': 'export const RpcCode = { invalidParams: -32602 }\n',
      }),
    )
    expect(bare.status).toBe(1)
    expect(bare.stderr).toMatch(/src\/server\/a\.ts:2 writes the JSON-RPC code -32602 as a number/)
    expect(bare.stderr.trim().split('\n')).toHaveLength(1)
  })

  it('check-test-timing fails on a test that compares a wall-clock duration', () => {
    const timed = run(
      'check-test-timing.mjs',
      testsTree({
        'a.test.ts': [
          "it('x', async () => {",
          '  const started = Date.now()',
          '  await work()',
          '  expect(Date.now() - started).toBeLessThan(1_900)',
          '})',
        ].join('\n'),
        'b.test.ts': [
          'const times: number[] = []',
          'const t0 = performance.now()',
          'times.push(performance.now() - t0)',
          'expect(times[7]).toBeLessThan(25)',
          'function serveWith() {',
          '  const started = Date.now()',
          '  return { code: 0, ms: Date.now() - started }',
          '}',
          'expect(serveWith().ms).not.toBeGreaterThanOrEqual(5)',
        ].join('\n'),
        'fine.test.ts': [
          '// expect(Date.now() - started).toBeLessThan(5) in a comment is fine',
          'const deadline = Date.now() + 2_000',
          'expect(stored.expiresAt).toBeGreaterThan(Date.now())',
          'expect(login.expiresAt).toBeGreaterThan(Date.now() - 1_000)',
          'await waitFor(() => Date.now() > deadline, 5_000, "later")',
        ].join('\n'),
      }),
    )
    expect(timed.status).toBe(1)
    expect(timed.stderr.trim().split('\n')).toEqual([
      'check-test-timing: tests/a.test.ts:4 compares a wall-clock duration (toBeLessThan): wait on an event and assert a state or a count; measure speed in npm run bench',
      'check-test-timing: tests/b.test.ts:4 compares a wall-clock duration (toBeLessThan): wait on an event and assert a state or a count; measure speed in npm run bench',
      'check-test-timing: tests/b.test.ts:9 compares a wall-clock duration (toBeGreaterThanOrEqual): wait on an event and assert a state or a count; measure speed in npm run bench',
    ])
  })

  it('check-era-type fails on the era spelled as a union of its literals', () => {
    const spelled = run(
      'check-era-type.mjs',
      tree({
        'protocol/facts.ts': "export type Era = 'legacy' | 'modern'\n",
        'server/a.ts': [
          "// 'legacy' | 'modern' in a comment is fine",
          "import type { Era } from '../protocol/facts.js'",
          "export type Mode = 'auto' | Era",
          "export type Kind = 'legacy' | 'probe'",
          'export type Old = "modern" | "legacy" | undefined',
          "export type Wide = 'auto' | 'legacy' | 'modern'",
          'export type Split =',
          "  | 'legacy'",
          "  | 'modern'",
        ].join('\n'),
      }),
    )
    expect(spelled.status).toBe(1)
    expect(spelled.stderr.trim().split('\n')).toEqual([
      'check-era-type: src/server/a.ts:5 spells the era as "modern" | "legacy": use Era from src/protocol/facts.ts',
      "check-era-type: src/server/a.ts:6 spells the era as 'auto' | 'legacy' | 'modern': use Era from src/protocol/facts.ts",
      "check-era-type: src/server/a.ts:8 spells the era as 'legacy' | 'modern': use Era from src/protocol/facts.ts",
    ])
  })

  it('check-names fails on two files of one name not listed with a reason', () => {
    const twice = run(
      'check-names.mjs',
      tree({
        'config/load.ts': 'export const a = 1\n',
        'skills/load.ts': 'export const b = 1\n',
        'agent/chat.ts': 'export const c = 1\n',
        'commands/chat.ts': 'export const d = 1\n',
      }),
    )
    expect(twice.status).toBe(1)
    expect(twice.stderr.trim().split('\n')).toEqual([
      'check-names: src/config/load.ts, src/skills/load.ts share the name load.ts: name each by its job (or list the name in scripts/check-names.mjs with why)',
    ])
  })

  it('check-names fails on a name declared in src/agent/ that says session, not on imports, fields or text', () => {
    const named = run(
      'check-names.mjs',
      tree({
        'agent/a.ts': [
          'import {',
          '  type ChildSessions,',
          "} from '../children/child-session.js'",
          'export interface LoadedSession {',
          '  id: string',
          '}',
          'export function resume(record: LoadedSession, sessions: ChildSessions) {',
          '  const {',
          '    sessionId: chatId,',
          '    lastSession,',
          '  } = { sessionId: record.id, lastSession: sessions }',
          '  // const commentSession = 1',
          "  return { type: 'session_end', sessionId: chatId, text: 'const quotedSession = 1', lastSession }",
          '}',
          'const [firstSession] = [1]',
          'export { firstSession }',
        ].join('\n'),
        'http/b.ts': 'export const session = 1\n',
      }),
    )
    expect(named.status).toBe(1)
    const why =
      'in the agent a recorded conversation is a chat record (ChatRecord, chatId; docs/architecture.md#vocabulary)'
    expect(named.stderr.trim().split('\n')).toEqual([
      `check-names: src/agent/a.ts:4 declares LoadedSession: ${why}`,
      `check-names: src/agent/a.ts:8 declares lastSession: ${why}`,
      `check-names: src/agent/a.ts:15 declares firstSession: ${why}`,
    ])
  })

  it('check-errors fails on an error told by its message or name, and on an empty catch', () => {
    const told = run(
      'check-errors.mjs',
      tree({
        'runtime/a.ts': [
          'export function a(outcome: { error: { message: string } }, thrown: unknown) {',
          '  if (/needs an OAuth login/.test(outcome.error.message)) return 1',
          "  if (thrown instanceof Error && thrown.name === 'ClientGoneError') return 2",
          '  const message = thrown instanceof Error ? thrown.message : String(thrown)',
          "  if (message.includes('not running')) return 3",
          '  try {',
          "    JSON.parse('')",
          '  } catch (e) {',
          "    if (String(e).startsWith('SyntaxError')) return 4",
          '  }',
          '  try {',
          "    JSON.parse('')",
          '  } catch {}',
          '  try {',
          "    JSON.parse('')",
          '  } catch {',
          '    // Not JSON: the caller says so.',
          '  }',
          '  // Showing a message, or checking its type, decides nothing.',
          "  if (typeof (thrown as Error).message === 'string') console.error(`failed: ${message}`)",
          '  // error-text: JSON.parse gives no code',
          '  return /end of JSON input/.test(message) ? 5 : 0',
          '}',
          '',
        ].join('\n'),
      }),
    )
    expect(told.status).toBe(1)
    expect(told.stderr.trim().split('\n')).toEqual([
      "check-errors: src/runtime/a.ts:2 reads an error's message or name and tests it with a regex: decide by its class or code (MycError's code, mycCodeOf in src/errors.ts)",
      "check-errors: src/runtime/a.ts:3 reads an error's message or name and compares it with a string: decide by its class or code (MycError's code, mycCodeOf in src/errors.ts)",
      "check-errors: src/runtime/a.ts:5 reads an error's message or name and searches it: decide by its class or code (MycError's code, mycCodeOf in src/errors.ts)",
      "check-errors: src/runtime/a.ts:9 reads an error's message or name and searches it: decide by its class or code (MycError's code, mycCodeOf in src/errors.ts)",
      'check-errors: src/runtime/a.ts:13 has an empty catch: say in a comment inside it what it handles, or handle the error',
    ])
  })

  it('check-tool-calls fails on an agent file that reaches a tool around the door', () => {
    const around = run(
      'check-tool-calls.mjs',
      tree({
        'agent/tool-call.ts': 'export const door = (x: any) => callVisibleTool(x) && x.source.ungated(x)\n',
        'agent/code-mode.ts': [
          '// callVisibleTool, named in a comment, is fine',
          'export class Source {',
          '  async ungated(call: unknown) {',
          '    return call',
          '  }',
          '}',
          'export const run = (rt: any, view: any, p: any) => callVisibleTool(rt, view, p, {})',
          'export const inner = (source: any, call: any) => source.ungated(call, undefined)',
          "export const builtin = (view: any) => view.callBuiltin('mycelium__exec', {}, () => ({}))",
          "export const child = (c: any) => c.forward('tools/call', {}, {})",
          'export const { ungated } = new Source()',
        ].join('\n'),
        'commands/x.ts': "import { callVisibleTool as call } from '../runtime/principal-tools.js'\n",
        'server/y.ts': 'export const fine = (rt: any) => callVisibleTool(rt)\n',
      }),
    )
    expect(around.status).toBe(1)
    expect(around.stderr.trim().split('\n')).toEqual([
      'check-tool-calls: src/agent/code-mode.ts:7 uses callVisibleTool: call tools through ToolDoor (src/agent/tool-call.ts)',
      "check-tool-calls: src/agent/code-mode.ts:8 uses a source's ungated call: only ToolDoor (src/agent/tool-call.ts) may call it",
      "check-tool-calls: src/agent/code-mode.ts:9 uses a view's callBuiltin: call tools through ToolDoor (src/agent/tool-call.ts)",
      "check-tool-calls: src/agent/code-mode.ts:10 calls a child's forward: call tools through ToolDoor (src/agent/tool-call.ts)",
      "check-tool-calls: src/agent/code-mode.ts:11 uses a source's ungated call: only ToolDoor (src/agent/tool-call.ts) may call it",
      'check-tool-calls: src/commands/x.ts:1 uses callVisibleTool: call tools through ToolDoor (src/agent/tool-call.ts)',
    ])
  })

  it('check-state fails on state located outside config/state-roots.ts', () => {
    const own = run(
      'check-state.mjs',
      tree({
        'agent/new-feature.ts': [
          "import os from 'node:os'",
          '// ~/.mycelium/cache in a comment is fine',
          "export const a = path.join(os.homedir(), '.mycelium', 'cache')",
          'export const b = `${process.env.XDG_CACHE_HOME}/x`',
          "export const c = path.join(env.HOME ?? '', '.config/mycelium/notes.json')",
          "export const d = ['APPDATA'] // check-state: a variable passed on, not a place",
          '',
        ].join('\n'),
        'config/state-roots.ts': "export const home = os.homedir()\nexport const dir = '.mycelium'\n",
      }),
    )
    expect(own.status).toBe(1)
    const lines = own.stderr.trim().split('\n')
    expect(lines).toEqual([
      expect.stringMatching(/src\/agent\/new-feature\.ts:3 locates the home folder \(homedir\)/),
      expect.stringMatching(/src\/agent\/new-feature\.ts:3 locates the project's state folder/),
      expect.stringMatching(/src\/agent\/new-feature\.ts:4 locates an XDG folder/),
      expect.stringMatching(/src\/agent\/new-feature\.ts:5 locates the home folder \(env\.HOME\)/),
      expect.stringMatching(/src\/agent\/new-feature\.ts:5 locates the person's config folder/),
    ])
  })
})
