// The official conformance suite's client auth scenarios with myc as the
// client (tests/conformance/myc-auth-client.mjs: `myc auth login --no-browser`,
// the URL followed as a person would, then tools through `myc serve`), for
// each spec revision's frozen requirement set. Prints one line per scenario.
//
//   npm run build && node --import tsx tests/conformance/run-auth.ts [--requirements 2025-11-25]…
//
// Not part of `npm test` (tests/e2e/conformance-auth.slow.test.ts runs it in
// `npm run test:slow`): the runner needs Node ≥ 22 (fetched as run.ts does).
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'
import { node22, REVISIONS, repoRoot, type Revision } from './run.js'

const runnerDir = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'conformance')
const client = path.join(repoRoot, 'tests', 'conformance', 'myc-auth-client.mjs')

/** The client auth scenarios a revision requires. */
export function authScenarios(revision: Revision): string[] {
  const set = parseYaml(readFileSync(path.join(runnerDir, 'requirements', `${revision}.yaml`), 'utf8')) as {
    client?: string[]
  }
  return (set.client ?? []).filter((s) => s.startsWith('auth/'))
}

/** Runs one scenario; resolves to the runner's verdict line and its pass/fail counts. */
export function runScenario(
  node: string,
  scenario: string,
  revision: Revision,
): Promise<{ scenario: string; ok: boolean; summary: string }> {
  return new Promise((resolve) => {
    const args = [
      path.join(runnerDir, 'dist', 'index.js'),
      'client',
      '--command',
      `${JSON.stringify(process.execPath)} ${JSON.stringify(client)}`,
      '--scenario',
      scenario,
      '--spec-version',
      revision,
    ]
    const child = spawn(node, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c.toString()))
    child.stderr.on('data', (c: Buffer) => (out += c.toString()))
    child.on('close', () => {
      // eslint-disable-next-line no-control-regex
      const plain = out.replace(/\x1b\[[0-9;]*m/g, '')
      const summary = /^Passed: .*$/m.exec(plain)?.[0] ?? 'no result'
      resolve({ scenario, ok: /OVERALL: PASSED/.test(plain), summary })
    })
  })
}

async function main(argv: string[]): Promise<number> {
  const asked = argv.flatMap((a, i) => (a === '--requirements' && argv[i + 1] ? [argv[i + 1] as Revision] : []))
  const revisions = asked.length ? asked : [...REVISIONS]
  const node = await node22((line) => process.stderr.write(`${line}\n`))
  let failed = 0
  for (const revision of revisions) {
    process.stdout.write(`requirements ${revision}:\n`)
    for (const scenario of authScenarios(revision)) {
      const r = await runScenario(node, scenario, revision)
      if (!r.ok) failed++
      process.stdout.write(`  ${r.ok ? 'pass' : 'FAIL'}  ${scenario.padEnd(40)} ${r.summary}\n`)
    }
  }
  return failed === 0 ? 0 : 1
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2))
}
