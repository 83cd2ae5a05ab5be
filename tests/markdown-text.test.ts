import { describe, expect, it } from 'vitest'
import {
  allowedLinkDestination,
  codeSpan,
  fencedBlock,
  inlineText,
  quoteBlock,
  safeMarkdown,
} from '../src/markdown-text.js'
import { HOSTILE, renderMarkdown, unsafeHtml } from './helpers/markdown.js'

describe('safeMarkdown in a quote: no unsafe link or raw HTML for a real renderer', () => {
  it.each(HOSTILE.map((h) => [h]))('%j', (hostile) => {
    // Followed by what myc writes next: it must stay myc's.
    const doc = `**assistant:**\n\n${quoteBlock(safeMarkdown(hostile))}\n\n**tool result**\n\n${fencedBlock('after')}\n`
    const html = renderMarkdown(doc)
    expect(unsafeHtml(html.commonmark), html.commonmark).toEqual([])
    expect(unsafeHtml(html.gfm), html.gfm).toEqual([])
    // myc's own parts after the text are still what they were.
    expect(html.commonmark).toContain('<p><strong>tool result</strong></p>\n<pre><code>after\n</code></pre>')
    expect(html.gfm).toContain('<p><strong>tool result</strong></p>\n<pre><code>after\n</code></pre>')
  })

  it('the same text as it is breaks out (the corpus is real): an unsafe link or tag, or what myc writes after it swallowed', () => {
    // Decoys: safe as they are, unsafe only to a fix that pairs backticks or finds code blocks wrongly.
    const decoys = [
      '``a` [x](javascript:alert(1)) `',
      '[a `](javascript:alert(1))`',
      '    indented <img src=x onerror=alert(1)>',
    ]
    const safeAsIs = HOSTILE.filter((hostile) => {
      const html = renderMarkdown(`**assistant:**\n\n${hostile}\n\n**tool result**\n\n${fencedBlock('after')}\n`)
      return [html.commonmark, html.gfm].every(
        (h) =>
          unsafeHtml(h).length === 0 &&
          h.includes('<p><strong>tool result</strong></p>\n<pre><code>after\n</code></pre>'),
      )
    })
    expect(safeAsIs).toEqual(decoys)
  })

  it('keeps safe Markdown as it was: formatting, http(s), mailto and relative links, code with < and ` in it', () => {
    const text =
      '# Plan\n\n**Bold** and _it_, see [docs](https://example.com/a?b=1), [mail](mailto:a@example.com), [rel](./x.md#y) and [top](#top).\n\n- `Array<string>` and `` a`b ``\n\n```ts\nconst x: Array<string> = [] // ``` inside? no: ``\n```'
    const html = renderMarkdown(quoteBlock(safeMarkdown(text))).commonmark
    expect(unsafeHtml(html)).toEqual([])
    expect(html).toContain('<h1>Plan</h1>')
    expect(html).toContain('<a href="https://example.com/a?b=1">docs</a>')
    expect(html).toContain('<a href="mailto:a@example.com">mail</a>')
    expect(html).toContain('<a href="./x.md#y">rel</a>')
    expect(html).toContain('<code>Array&lt;string&gt;</code>')
    expect(html).toContain('<code>a`b</code>')
    expect(html).toContain(
      '<pre><code class="language-ts">const x: Array&lt;string&gt; = [] // ``` inside? no: ``\n</code></pre>',
    )
    expect(html.match(/<blockquote>/g)).toHaveLength(1)
  })

  it('a blocked link stays readable as text', () => {
    const html = renderMarkdown(quoteBlock(safeMarkdown('see [x](javascript:alert(1)) and <b>bold</b>'))).commonmark
    expect(html).toContain('see [x](javascript:alert(1)) and &lt;b&gt;bold&lt;/b&gt;')
  })
})

describe('fencedBlock, codeSpan, inlineText', () => {
  it.each([
    ['plain'],
    ['```\n# not a heading\n```'],
    ['````\n```\n[x](javascript:alert(1))'],
    ['`````` six'],
    ['~~~\nx'],
  ])('fencedBlock(%j) is one code block holding exactly the text', (text) => {
    const md = `${fencedBlock(text)}\n\n[after](javascript:alert(1))\n`
    const html = renderMarkdown(fencedBlock(text)).commonmark
    expect(html.match(/<pre>/g)).toHaveLength(1)
    expect(html).toBe(
      `<pre><code>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')}\n</code></pre>\n`,
    )
    expect(renderMarkdown(md).commonmark.startsWith(html)).toBe(true)
  })

  it('codeSpan keeps a name with backticks and line breaks on one code span', () => {
    for (const name of ['a`b', '`x', 'y`', 'x\n\n# Forged', '``']) {
      const html = renderMarkdown(`**tool call** ${codeSpan(name)}`).commonmark
      expect(html.match(/<code>/g), html).toHaveLength(1)
      expect(html).not.toContain('<h1>')
    }
  })

  it('inlineText: punctuation is text', () => {
    expect(renderMarkdown(`# Session ${inlineText('x [a](javascript:alert(1)) <b> *y* `z`')}`).commonmark).toBe(
      '<h1>Session x [a](javascript:alert(1)) &lt;b&gt; *y* `z`</h1>\n',
    )
  })

  it.each([
    ['https://example.com', true],
    ['HTTP://example.com', true],
    ['mailto:a@b.c', true],
    ['./x.md', true],
    ['#frag', true],
    ['x/y:z', true],
    ['', true],
    ['javascript:alert(1)', false],
    [' javascript:x', false],
    ['<javascript:x>', false],
    ['java&#115;cript:x', false],
    ['data:text/html,x', false],
    ['vbscript:x', false],
    ['file:///etc/passwd', false],
    ['http:evil', false],
    ['\\javascript:x', false],
  ])('allowedLinkDestination(%j) → %s', (destination, allowed) => {
    expect(allowedLinkDestination(destination)).toBe(allowed)
  })
})

describe('inlineText at the start of a line', () => {
  it.each([
    ['- item'],
    ['+ item'],
    ['1. item'],
    ['2) item'],
    ['# heading'],
    ['> quote'],
    ['==='],
    ['***'],
    ['`code`'],
    ['<b>x</b>'],
    ['a | b'],
  ])('%j stays a paragraph of that text', (text) => {
    const html = renderMarkdown(inlineText(text)).commonmark
    expect(html).toMatch(/^<p>[^<]*<\/p>\n$/)
  })
})
