/**
 * The benchmark page: `npm run bench` ends here, writing the figures of its
 * run into docs/benchmarks.md (between the `bench:page` markers; the prose
 * around them is the maintainers') and the chart into docs/benchmarks.svg.
 * `node --import tsx bench/page.ts [results.json]` writes the page again
 * from a saved run (bench/results/latest.json by default).
 */
import { cpus, loadavg, release, totalmem, type as osType } from 'node:os'
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { renderChart, type Panel } from './chart.js'
import { LARGE_SIZES, type SideFigures, type SidesResult } from './sides.js'

export const BEGIN = '<!-- bench:page (written by `npm run bench`, bench/page.ts: change the code, not this part) -->'
export const END = '<!-- bench:page end -->'

/** The machine a run was made on, recorded at its start. */
export function machine() {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${osType()} ${release()}`,
    loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
  }
}

type Machine = ReturnType<typeof machine>

const fixed = (x: number | undefined, d: number) =>
  x === undefined ? '' : x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d })
const ratio = (x: number | undefined, base: number | undefined) =>
  x === undefined || base === undefined ? '' : `${(x / base).toFixed(2)}×`

function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n')
}

function smallCalls(sides: Record<string, SideFigures>, base: string): string {
  const b = sides[base]!
  return table(
    ['side', 'p50 (ms)', 'p99 (ms)', 'calls/s, 32 in flight', `p50 vs ${base}`, `calls/s vs ${base}`],
    Object.entries(sides).map(([name, s]) =>
      s.absent !== undefined
        ? [name, `absent: ${s.absent}`, '', '', '', '']
        : [
            name,
            fixed(s.p50Ms, 3),
            fixed(s.p99Ms, 3),
            fixed(s.callsPerSecond, 0),
            ratio(s.p50Ms, b.p50Ms),
            ratio(s.callsPerSecond, b.callsPerSecond),
          ],
    ),
  )
}

/** An error's text as one line of Markdown: whitespace folded, no markup (a peer's HTML error page). */
const oneLine = (text: string) =>
  text
    .replace(/<[^>]*>?/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()

/** The large-message table: each size's p50, and its ratio to each of `bases` (the first is the floor). */
function largeMessages(sides: Record<string, SideFigures>, bases: string[]): string {
  const labels = Object.keys(LARGE_SIZES)
  const rows = table(
    ['side', ...labels.flatMap((l) => [`${l} p50 (ms)`, ...bases.map((b) => `vs ${b}`)])],
    Object.entries(sides)
      .filter(([, s]) => s.absent === undefined)
      .map(([name, s]) => [
        name,
        ...labels.flatMap((l) => [
          s.large?.[l] === undefined ? 'failed' : fixed(s.large[l], 2),
          ...bases.map((b) => ratio(s.large?.[l], sides[b]?.large?.[l])),
        ]),
      ]),
  )
  const failed = Object.entries(sides).filter(([, s]) => s.largeRefused !== undefined)
  return failed.length === 0
    ? rows
    : `${rows}\n\n${failed.map(([n, s]) => `Failed through ${n}: ${oneLine(s.largeRefused!)}`).join('; ')}.`
}

function tenMiB(t: SidesResult['tenMiB']): string {
  return (
    table(
      ['small calls through myc', 'p50 (ms)', 'p99 (ms)', 'longest (ms)'],
      [
        ['alone', fixed(t.alone.p50, 3), fixed(t.alone.p99, 3), fixed(t.alone.max, 1)],
        [
          `beside ${t.bigAnswers} 10 MiB answers from another child, one after another (${fixed(t.beside.calls, 0)} calls)`,
          fixed(t.beside.p50, 3),
          fixed(t.beside.p99, 3),
          fixed(t.beside.max, 1),
        ],
      ],
    ) +
    `\n\nmyc's peak resident memory (VmHWM) over the case: ${fixed(t.peakRssMiB, 1)} MiB.` +
    (t.loop
      ? ` Its event loop while the big answers went through: held at most ${fixed(t.loop.maxMs, 1)} ms at once, p99 ${fixed(t.loop.p99Ms, 1)} ms (a call that arrives during one turn waits for it).`
      : '')
  )
}

function targets(results: Record<string, unknown>): string {
  const all = (results.targets ?? {}) as Record<string, { value?: number; target?: string; met?: boolean }>
  if (Object.keys(all).length === 0) return 'Not measured in this run (one section only, `--only sides`).'
  return table(
    ['target', 'measured', 'wanted', ''],
    Object.entries(all)
      .filter(([, t]) => typeof t.value === 'number')
      .map(([name, t]) => [name, fixed(t.value, 2), t.target ?? '', t.met ? 'met' : 'missed']),
  )
}

/** The chart's four panels: small-call p50 and calls/s, over stdio and over HTTP. */
export function panels(sides: Pick<SidesResult, 'stdio' | 'http'>): Panel[] {
  const bars = (figures: Record<string, SideFigures>, pick: (s: SideFigures) => number | undefined) =>
    Object.entries(figures).map(([side, s]) => ({ side, value: pick(s), absent: s.absent }))
  return (['stdio', 'http'] as const).flatMap((transport) => {
    const name = transport === 'stdio' ? 'stdio' : 'HTTP'
    return [
      {
        title: `${name}: small call, sequential p50 (lower is better)`,
        unit: 'ms',
        decimals: 3,
        pick: (s: SideFigures) => s.p50Ms,
      },
      {
        title: `${name}: small calls per second, 32 in flight (higher is better)`,
        unit: 'calls/s',
        decimals: 0,
        pick: (s: SideFigures) => s.callsPerSecond,
      },
    ].map(({ pick, ...panel }) => ({ ...panel, bars: bars(sides[transport], pick) }))
  })
}

function caption(results: Record<string, unknown>): string {
  const m = results.machine as Machine | undefined
  const where = m ? `${m.cpu}, ${m.cores} cores, load ${m.loadAverage.join(' ')} at start` : 'machine not recorded'
  return `${String(results.date ?? '')
    .slice(0, 16)
    .replace('T', ' ')} UTC · Node ${String(results.node)} · ${where}${results.quick ? ' · --quick' : ''}`
}

/** The page's generated part, between the markers. */
function pageSection(results: Record<string, unknown>): string {
  const sides = results.sides as SidesResult
  const m = results.machine as Machine | undefined
  return [
    BEGIN,
    '',
    `Run of ${String(results.date)} with Node ${String(results.node)}${results.quick ? ' (`--quick`)' : ''} on ${
      m
        ? `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}; load average ${m.loadAverage.join(', ')} at its start`
        : 'an unrecorded machine'
    }. On a busy machine only the ratios within one run mean anything.`,
    '',
    '![Latency and throughput per side, stdio and HTTP](benchmarks.svg)',
    '',
    '### Small calls over stdio',
    '',
    smallCalls(sides.stdio, 'copy relay'),
    '',
    "### Small calls over Streamable HTTP (direct: the SDK's own HTTP server serving the tool)",
    '',
    smallCalls(sides.http, 'direct'),
    '',
    '### Large messages (the message goes in, the echo answers it twice: text and structured content)',
    '',
    'stdio:',
    '',
    largeMessages(sides.stdio, ['copy relay']),
    '',
    "HTTP (copy relay: bench/http-copy-relay.mjs, the same copy over HTTP; direct: the SDK's own HTTP server):",
    '',
    largeMessages(sides.http, ['copy relay', 'direct']),
    '',
    '### A 10 MiB answer beside small calls',
    '',
    tenMiB(sides.tenMiB),
    '',
    '### Targets of the run',
    '',
    targets(results),
    '',
    END,
  ].join('\n')
}

/** Writes docs/benchmarks.svg and the generated part of docs/benchmarks.md from one run's results. */
export function writePage(root: string, results: Record<string, unknown>): void {
  const file = path.join(root, 'docs', 'benchmarks.md')
  const page = readFileSync(file, 'utf8')
  const start = page.indexOf(BEGIN)
  const end = page.indexOf(END)
  if (start === -1 || end < start)
    throw new Error(`${file} has no "${BEGIN}" ... "${END}" markers: put them back where the generated part goes`)
  writeFileSync(file, page.slice(0, start) + pageSection(results) + page.slice(end + END.length))
  writeFileSync(
    path.join(root, 'docs', 'benchmarks.svg'),
    renderChart(panels(results.sides as SidesResult), caption(results)),
  )
  process.stdout.write('wrote docs/benchmarks.md and docs/benchmarks.svg\n')
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)))
  const source = process.argv[2] ?? path.join(root, 'bench', 'results', 'latest.json')
  writePage(root, JSON.parse(readFileSync(source, 'utf8')) as Record<string, unknown>)
}
