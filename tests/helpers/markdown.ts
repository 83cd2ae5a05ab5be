import { HtmlRenderer, Parser } from 'commonmark'
import { marked } from 'marked'

/**
 * Markdown as two real renderers make it HTML, both with raw HTML and every
 * link scheme let through (as some viewers do): commonmark.js (the
 * CommonMark reference) and marked (GitHub Flavored Markdown: tables,
 * autolinked URLs).
 */
export function renderMarkdown(markdown: string): { commonmark: string; gfm: string } {
  return {
    commonmark: new HtmlRenderer().render(new Parser().parse(markdown)),
    gfm: marked.parse(markdown, { async: false, gfm: true }),
  }
}

/** The tags a Markdown renderer makes itself; any other tag in its HTML was raw HTML let through. */
const MARKDOWN_TAGS = new Set([
  'p',
  'blockquote',
  'pre',
  'code',
  'strong',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'a',
  'hr',
  'br',
  'img',
  'del',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'input',
])

/** What in rendered HTML would be unsafe: raw tags, event handlers, links and images to a scheme other than http(s) and mailto. Empty when safe. */
export function unsafeHtml(html: string): string[] {
  const problems: string[] = []
  for (const m of html.matchAll(/<\/?([A-Za-z][A-Za-z0-9-]*)([^>]*)>/g)) {
    const [tag, name, attrs] = [m[0], m[1]!.toLowerCase(), m[2]!]
    if (!MARKDOWN_TAGS.has(name)) problems.push(`raw tag ${tag}`)
    if (/\son[a-z]+\s*=/i.test(attrs)) problems.push(`event handler in ${tag}`)
    for (const a of attrs.matchAll(/\s(href|src)\s*=\s*"([^"]*)"/gi)) {
      const url = decodeEntities(a[2]!).replace(/[\u0000-\u0020]/g, '')
      if (/^[a-z][a-z0-9+.-]*:/i.test(url) && !/^(?:https?|mailto):/i.test(url))
        problems.push(`${a[1]}=${a[2]} in ${tag}`)
    }
  }
  return problems
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);?/gi, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#([0-9]+);?/g, (_m, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&colon;/gi, ':')
    .replace(/&amp;/g, '&')
}

/** Text a model or a tool could write to get links, HTML or structure into myc's Markdown. */
export const HOSTILE = [
  '[x](javascript:alert(1))',
  '![img](javascript:alert(1))',
  '[x]( javascript:alert(1) )',
  '[x](<javascript:alert(1)>)',
  '[x](\njavascript:alert(1))',
  '[x](JaVaScRiPt:alert(1))',
  '[x](java&#115;cript:alert(1))',
  '[x](&#106;avascript&colon;alert(1))',
  '[x](vbscript:msgbox(1))',
  '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '[x](file:///etc/passwd)',
  '[x][ref]\n\n[ref]: javascript:alert(1)',
  '[ref]\n\n[ref]:\n  javascript:alert(1)',
  '- [ref]: javascript:alert(1)\n\n[ref]',
  '> [ref]: javascript:alert(1)\n\n[ref]',
  '<javascript:alert(1)>',
  '<a href="javascript:alert(1)">x</a>',
  '<img src=x onerror=alert(1)>',
  '<script>alert(1)</script>',
  '<!-- hide the rest',
  '<div>\n\n[x](javascript:alert(1))\n\n</div>',
  '\\` [x](javascript:alert(1)) `',
  '`a\nb` [x](javascript:alert(1)) `c`',
  '``a` [x](javascript:alert(1)) `',
  '<https://ok.example/`> [x](javascript:alert(1)) `',
  'see https://x.example/`a` [y](javascript:alert(1)) `b`',
  'www.example.com/`a [y](javascript:alert(1)) `',
  '[a `](javascript:alert(1))`',
  '| a | b |\n| - | - |\n| `x | [y](javascript:alert(1)) ` |',
  '```\ncode\n```\n[x](javascript:alert(1))',
  '- item\n\n  ```\n[x](javascript:alert(1))\n  ```',
  '~~~\nopen fence never closed\n[x](javascript:alert(1))',
  '```\nopen fence never closed',
  '    indented <img src=x onerror=alert(1)>',
  '[x](javascript:alert`1`)',
  '\\\\[x](javascript:alert(1))',
  '\\\\<img src=x onerror=alert(1)>',
  'a\rb <img src=x onerror=alert(1)>\r[x](javascript:alert(1))',
]
