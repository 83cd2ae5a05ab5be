import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { renderChart } from '../../bench/chart.js'
import { BEGIN, END, panels, writePage } from '../../bench/page.js'
import type { SidesResult } from '../../bench/sides.js'
import { chromium, screenshot } from '../helpers/chromium.js'

const figures = (p50Ms: number, callsPerSecond: number) => ({
  p50Ms,
  p99Ms: p50Ms * 2,
  callsPerSecond,
  large: { '64 KiB': p50Ms * 3, '1 MiB': p50Ms * 20 },
})

/** A run as bench/sides.ts reports one: every side of stdio and HTTP, one peer absent. */
const sides: SidesResult = {
  stdio: {
    direct: figures(0.2, 25_000),
    'copy relay': figures(0.24, 19_000),
    myc: figures(0.3, 15_000),
    '1MCP': figures(0.45, 9_000),
    'mcp-hub': { absent: 'no stdio face (HTTP only)' },
  },
  http: {
    direct: figures(0.6, 4_000),
    'copy relay': figures(0.5, 4_500),
    myc: figures(0.75, 3_500),
    '1MCP': { absent: 'MYC_BENCH_1MCP not set' },
    'mcp-hub <&>': figures(1.2, 1_500),
  },
  tenMiB: {
    alone: { p50: 0.3, p99: 0.9, max: 2, calls: 600 },
    beside: { p50: 0.35, p99: 4, max: 40, calls: 2_000 },
    p50Ratio: 1.17,
    bigAnswers: 12,
    peakRssMiB: 150,
    loop: { p99Ms: 2.5, maxMs: 9.25 },
  },
}
const results = { date: '2026-11-29T08:00:00.000Z', node: 'v20.20.2', quick: true, sides }

function render(svg: string, dir: string, name: string): Buffer {
  const file = path.join(dir, `${name}.svg`)
  const png = path.join(dir, `${name}.png`)
  writeFileSync(file, svg)
  screenshot(file, png, 880, Number(/height="(\d+)"/.exec(svg)![1]))
  return readFileSync(png)
}

describe('the benchmark page (bench/page.ts, bench/chart.ts)', () => {
  it('refuses a page without its markers, naming them, and leaves the page as it was', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'myc-bench-page-'))
    mkdirSync(path.join(root, 'docs'))
    writeFileSync(path.join(root, 'docs', 'benchmarks.md'), '# Benchmarks\n\nNo markers here.\n')
    expect(() => writePage(root, results)).toThrow(/has no "<!-- bench:page .*markers/)
    expect(readFileSync(path.join(root, 'docs', 'benchmarks.md'), 'utf8')).toBe('# Benchmarks\n\nNo markers here.\n')
  })

  it('writes the run between the markers, keeps the prose around them, and the chart beside it', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'myc-bench-page-'))
    mkdirSync(path.join(root, 'docs'))
    const page = path.join(root, 'docs', 'benchmarks.md')
    writeFileSync(page, `# Benchmarks\n\nBefore.\n\n${BEGIN}\nold figures\n${END}\n\nAfter.\n`)
    writePage(root, results)
    const text = readFileSync(page, 'utf8')
    expect(text).not.toContain('old figures')
    expect(text.startsWith('# Benchmarks\n\nBefore.\n\n')).toBe(true)
    expect(text.endsWith(`${END}\n\nAfter.\n`)).toBe(true)
    expect(text).toContain('with Node v20.20.2')
    expect(text).toContain('| mcp-hub | absent: no stdio face (HTTP only) |')
    // myc against the copy relay, in the run's own ratio.
    expect(text).toMatch(/\| myc \| 0\.300 \| 0\.600 \| 15,000 \| 1\.25× \| 0\.79× \|/)
    // Over HTTP the large messages are set against the HTTP copy relay and against direct.
    expect(text).toContain(
      '| side | 64 KiB p50 (ms) | vs copy relay | vs direct | 1 MiB p50 (ms) | vs copy relay | vs direct |',
    )
    expect(text).toContain('| copy relay | 1.50 | 1.00× | 0.83× | 10.00 | 1.00× | 0.83× |')
    expect(text).toContain('| myc | 2.25 | 1.50× | 1.25× | 15.00 | 1.50× | 1.25× |')
    expect(text).toContain('![Latency and throughput per side, stdio and HTTP](benchmarks.svg)')
    expect(text).toContain(
      '| beside 12 10 MiB answers from another child, one after another (2,000 calls) | 0.350 | 4.000 | 40.0 |',
    )
    expect(text).toContain('held at most 9.3 ms at once, p99 2.5 ms')
    writePage(root, results)
    expect(readFileSync(page, 'utf8')).toBe(text)
    const svg = readFileSync(path.join(root, 'docs', 'benchmarks.svg'), 'utf8')
    expect(svg).toContain('absent: MYC_BENCH_1MCP not set')
    expect(svg).toContain('mcp-hub &lt;&amp;&gt;')
    expect(svg).not.toContain('<&>')
  })

  it.runIf(chromium)(
    'renders in a real browser to a chart that is not empty',
    () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'myc-bench-chart-'))
      const svg = renderChart(panels(sides), 'caption')
      // One bar per side measured: 4 + 4 sides in two panels each.
      expect(svg.match(/<rect x=/g)).toHaveLength(16)
      const chart = render(svg, dir, 'chart')
      const height = /height="(\d+)"/.exec(svg)![1]
      const blank = render(
        `<svg xmlns="http://www.w3.org/2000/svg" width="880" height="${height}"><rect width="880" height="${height}" fill="#fff"/></svg>`,
        dir,
        'blank',
      )
      expect(chart.subarray(1, 4).toString()).toBe('PNG')
      // Bars and text compress far worse than a white page of the same size.
      expect(statSync(path.join(dir, 'chart.png')).size).toBeGreaterThan(5 * blank.length)
      if (process.env.MYC_KEEP_SCREENSHOT) writeFileSync(process.env.MYC_KEEP_SCREENSHOT, chart)
    },
    90_000,
  )
})
