import { describe, expect, it } from 'vitest'
import { safeMarkdownRenderer } from '../src/markdown-html.js'

const markdownToSafeHtml = async (markdown: string) => (await safeMarkdownRenderer())(markdown)
import { HOSTILE, unsafeHtml } from './helpers/markdown.js'

describe('safeMarkdownRenderer: a model’s Markdown rendered for a page myc writes', () => {
  it('renders what Markdown means: emphasis, code, lists, headings, tables, links', async () => {
    const html = await markdownToSafeHtml(
      '# Plan\n\nUse **skills**, *roles* and `myc init`:\n\n- one\n- two\n\n1. first\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n```sh\nmyc status\n```\n\nSee [the docs](https://example.com/docs?a=1&b=2) or https://example.org.',
    )
    expect(html).toContain('<h1>Plan</h1>')
    expect(html).toContain('<strong>skills</strong>')
    expect(html).toContain('<em>roles</em>')
    expect(html).toContain('<code>myc init</code>')
    expect(html).toContain('<li>one</li>')
    expect(html).toContain('<ol>\n<li>first</li>')
    expect(html).toContain('<td>1</td>')
    expect(html).toContain('<pre><code class="language-sh">myc status\n</code></pre>')
    expect(html).toContain('<a href="https://example.com/docs?a=1&amp;b=2" rel="noopener noreferrer">the docs</a>')
    expect(html).toContain('<a href="https://example.org" rel="noopener noreferrer">https://example.org</a>')
    expect(html).not.toContain('**')
  })

  it.each(HOSTILE.map((h) => [h]))('makes %j safe: no raw tag, event handler or unsafe link', async (hostile) => {
    const html = await markdownToSafeHtml(hostile)
    expect(unsafeHtml(html), html).toEqual([])
  })

  it('shows raw HTML as text, an unsafe link as its text and address, and loads no image', async () => {
    expect(await markdownToSafeHtml('<script>alert(1)</script>')).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(await markdownToSafeHtml('[x](javascript:alert(1))')).toBe('<p>x (javascript:alert(1))</p>\n')
    const image = await markdownToSafeHtml('![logo](https://example.com/logo.png)')
    expect(image).not.toMatch(/<img/)
    expect(image).toContain('<a href="https://example.com/logo.png" rel="noopener noreferrer">image: logo</a>')
    // Control characters are shown, not obeyed (a bidi override reorders a page too).
    expect(await markdownToSafeHtml('a\u202eb')).toBe('<p>a\\u202eb</p>\n')
  })
})
