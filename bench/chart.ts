/**
 * The benchmark page's chart (docs/benchmarks.svg): one panel per measure
 * and transport (small-call p50 latency and calls per second at 32 in flight,
 * over stdio and over HTTP), a horizontal bar per side (direct, the copy
 * relay, myc, each peer). A side that was not measured (a peer not built
 * here) is drawn as a labelled row without a bar, never as a guess. Pure: the
 * figures in, the SVG text out.
 */

/** One side's figure in a panel; `absent` says why there is none. */
interface Bar {
  side: string
  value?: number | undefined
  absent?: string | undefined
}

export interface Panel {
  title: string
  /** The unit written after each value (`ms`, `calls/s`). */
  unit: string
  /** How many decimals a value is written with. */
  decimals: number
  bars: Bar[]
}

const WIDTH = 880
const LABEL = 170
const VALUE = 110
const ROW = 24
const PANEL_GAP = 30
const TITLE = 26
const COLOURS: Record<string, string> = { direct: '#7a869a', 'copy relay': '#a0a0a0', myc: '#2f7d4f' }
const PEER_COLOUR = '#c27c2c'
/** myc run another way (metrics off, traced): myc's colour, lighter. */
const MYC_VARIANT_COLOUR = '#7fb894'

const escapeXml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;')

function panelSvg(panel: Panel, top: number): { svg: string; height: number } {
  const max = Math.max(...panel.bars.map((b) => b.value ?? 0), Number.MIN_VALUE)
  const span = WIDTH - LABEL - VALUE - 20
  const parts = [
    `<text x="10" y="${top + 18}" class="title">${escapeXml(panel.title)}</text>`,
    ...panel.bars.map((bar, i) => barSvg(bar, panel, top + TITLE + i * ROW, (bar.value ?? 0) * (span / max))),
  ]
  return { svg: parts.join('\n'), height: TITLE + panel.bars.length * ROW }
}

function barSvg(bar: Bar, panel: Panel, y: number, length: number): string {
  const label = `<text x="${LABEL - 8}" y="${y + 16}" class="side">${escapeXml(bar.side)}</text>`
  if (bar.value === undefined)
    return `${label}\n<text x="${LABEL}" y="${y + 16}" class="absent">absent: ${escapeXml(bar.absent ?? 'not measured')}</text>`
  const colour = COLOURS[bar.side] ?? (bar.side.startsWith('myc') ? MYC_VARIANT_COLOUR : PEER_COLOUR)
  const text = `${bar.value.toLocaleString('en-US', { maximumFractionDigits: panel.decimals, minimumFractionDigits: panel.decimals })} ${panel.unit}`
  return [
    label,
    `<rect x="${LABEL}" y="${y + 4}" width="${Math.max(1, length).toFixed(1)}" height="${ROW - 8}" fill="${colour}"/>`,
    `<text x="${(LABEL + Math.max(1, length) + 6).toFixed(1)}" y="${y + 16}" class="value">${escapeXml(text)}</text>`,
  ].join('\n')
}

/** The chart: the panels one under the other, with a caption line (machine, Node, date) at the bottom. */
export function renderChart(panels: Panel[], caption: string): string {
  const body: string[] = []
  let y = 10
  for (const panel of panels) {
    const { svg, height } = panelSvg(panel, y)
    body.push(svg)
    y += height + PANEL_GAP
  }
  const height = y + 10
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="13">`,
    '<style>.title{font-weight:bold;font-size:14px}.side{text-anchor:end}.absent{fill:#888;font-style:italic}.value{fill:#222}.caption{fill:#555;font-size:11px}</style>',
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...body,
    `<text x="10" y="${height - 12}" class="caption">${escapeXml(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n')
}
