// Records how long each test file of `npm test` took, for the sequencer that
// orders a fresh clone's run (tests/helpers/sequencer.ts): runs the suite with
// vitest's JSON report and writes tests/durations.json (seconds, one decimal).
// Run it on an idle machine when files were added or changed much.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'

const root = path.join(import.meta.dirname, '..')
const folder = mkdtempSync(path.join(tmpdir(), 'myc-durations-'))
const report = path.join(folder, 'report.json')
const run = spawnSync('npx', ['vitest', 'run', '--reporter=json', `--outputFile=${report}`], {
  cwd: root,
  stdio: 'inherit',
})
if (run.status !== 0) {
  process.stderr.write(`record-durations: vitest exited with ${run.status}; nothing written\n`)
  process.exit(1)
}
const durations = {}
const results = JSON.parse(readFileSync(report, 'utf8')).testResults
rmSync(folder, { recursive: true, force: true })
for (const file of results) {
  durations[path.relative(root, file.name)] = Math.round((file.endTime - file.startTime) / 100) / 10
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => (a < b ? -1 : 1)))
writeFileSync(path.join(root, 'tests', 'durations.json'), `${JSON.stringify(sorted, null, 2)}\n`)
process.stdout.write(`record-durations: ${Object.keys(sorted).length} files written to tests/durations.json\n`)
