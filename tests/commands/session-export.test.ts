import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runAgentHere } from '../helpers/agent.js'
import { FakeAnthropic } from '../helpers/fake-anthropic.js'
import { fixtureEntry } from '../helpers/runtime.js'
import { chromium, screenshot } from '../helpers/chromium.js'

/** The model's last reply: Markdown to render, and HTML and links that must not run. */
const REPLY = [
  '**Done** & dusted: <script>document.title = "PWNED"</script>',
  '',
  '- a `code` item',
  '- [the docs](https://example.com/docs)',
  '- [a trap](javascript:document.title="PWNED")',
  '',
  "<img src=x onerror=\"document.body.setAttribute('data-pwned', '1')\">",
].join('\n')

describe('exporting a session (in process)', () => {
  const fake = new FakeAnthropic()
  let config = ''
  let id = ''
  const out = mkdtempSync(path.join(tmpdir(), 'myc-export-'))
  beforeAll(async () => {
    await fake.start()
    config = path.join(mkdtempSync(path.join(tmpdir(), 'myc-export-cfg-')), 'mycelium.config.json')
    writeFileSync(config, JSON.stringify({ mcpServers: { echo: fixtureEntry('echo') } }))
    fake.setScript((_req, i) =>
      i === 0
        ? {
            content: [
              { type: 'text', text: 'Let me echo <b>that</b>.' },
              { type: 'tool_use', name: 'echo__echo', input: { message: '<img src=x onerror=alert(1)>' } },
            ],
          }
        : { content: [{ type: 'text', text: REPLY }] },
    )
    const run = await runAgentHere(['run', 'Say <script>alert(1)</script>', '--json', '--config', config], { fake })
    id = (run.events[0] as { sessionId: string }).sessionId
  }, 30_000)
  afterAll(async () => {
    await fake.close()
  })

  it('as Markdown and as JSON with the same messages as on disk', async () => {
    const md = (await runAgentHere(['sessions', 'export', id, '--format', 'md', '--config', config])).stdout
    expect(md).toContain(`# Session ${id}`)
    expect(md).toContain('**tool call** `echo__echo`')
    expect(md).toContain('**Done** & dusted')
    const json = JSON.parse(
      (await runAgentHere(['sessions', 'export', id, '--format', 'json', '--config', config])).stdout,
    ) as { meta: { id: string }; messages: unknown[] }
    expect(json.meta.id).toBe(id)
    expect(json.messages).toHaveLength(4)
    const bad = await runAgentHere(['sessions', 'export', id, '--format', 'pdf', '--config', config])
    expect(bad.code).toBe(2)
  }, 30_000)

  it.runIf(chromium)(
    'as one self-contained HTML file that a real browser renders, content escaped, tool calls folded',
    async () => {
      const html = (await runAgentHere(['sessions', 'export', id, '--format', 'html', '--config', config])).stdout
      const file = path.join(out, 'session.html')
      writeFileSync(file, html)
      // Self-contained: no scripts, no external assets.
      expect(html).not.toMatch(/<script|<link|src=["']?https?:|url\(/i)
      const dom = execFileSync(
        chromium!,
        ['--headless', '--no-sandbox', '--disable-gpu', '--dump-dom', `file://${file}`],
        { encoding: 'utf8', timeout: 60_000 },
      )
      // What the user typed and the tool said is text on the page, not markup.
      expect(dom).toContain('Say &lt;script&gt;alert(1)&lt;/script&gt;')
      expect(dom).toContain('&lt;img src=x onerror=alert(1)&gt;')
      expect(dom).not.toMatch(/<img/)
      // The model's Markdown is rendered: emphasis, code, a list, a link.
      expect(dom).toContain('<strong>Done</strong> &amp; dusted')
      expect(dom).toContain('<li>a <code>code</code> item</li>')
      expect(dom).toContain('<a href="https://example.com/docs" rel="noopener noreferrer">the docs</a>')
      // Its HTML is text, its javascript: link is not a link, and nothing of it ran (the title and body are untouched).
      expect(dom).toContain('&lt;script&gt;document.title = "PWNED"&lt;/script&gt;')
      expect(dom).toContain('a trap (javascript:document.title="PWNED")')
      expect(dom).not.toMatch(/href="javascript|<body[^>]*data-pwned|<title>PWNED/i)
      expect(dom).toMatch(/<title>Session [^<]+<\/title>/)
      expect((dom.match(/<details/g) ?? []).length).toBe(2)
      const png = path.join(out, 'session.png')
      screenshot(file, png, 1000, 700)
      expect(existsSync(png)).toBe(true)
      expect(statSync(png).size).toBeGreaterThan(5_000)
      expect(readFileSync(png).subarray(1, 4).toString()).toBe('PNG')
      if (process.env.MYC_KEEP_SCREENSHOT) writeFileSync(process.env.MYC_KEEP_SCREENSHOT, readFileSync(png))
    },
    90_000,
  )
})
