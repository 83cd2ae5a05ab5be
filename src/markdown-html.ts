import { allowedLinkDestination } from './markdown-text.js'
import { terminalText } from './terminal-text.js'
import { lazyEmbedded } from './embedded-module.js'

/** Text as HTML text or a double-quoted attribute value: nothing in it is markup, and no character reference is left for a browser to decode. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
}

/**
 * Whether a link's address may be a link on the page: http(s), mailto, or
 * relative (no scheme), with no control character or space inside it. It
 * is written to the page with its `&` escaped, so the browser reads exactly
 * this address (a character reference in it is text, never a scheme).
 */
function safeHref(href: string): boolean {
  return allowedLinkDestination(href) && !/[\u0000-\u0020\u007f-\u009f]/.test(href.trim())
}

/** marked, loaded when an export needs it: built, it is a gzipped file beside the bundle, so no other run reads or parses it. */
const loadMarked: () => Promise<Pick<typeof import('marked'), 'Marked'>> = lazyEmbedded(
  'marked',
  () => import('marked'),
)

/**
 * A renderer of a model's Markdown (GitHub Flavored: tables,
 * strikethrough, task lists, bare URLs) to HTML for a page myc writes,
 * made safe whatever the text holds: raw HTML in it is shown as text (so
 * no script, no event handler, no style); a link only to an http(s),
 * mailto or relative address, any other shown as its text and its
 * address; an image never loaded (the page has no external assets): a
 * link to it instead. Control characters are shown as escapes first
 * ({@link terminalText}), as everywhere myc shows outside text.
 */
export async function safeMarkdownRenderer(): Promise<(markdown: string) => string> {
  const { Marked } = await loadMarked()
  const marked = new Marked({ gfm: true, async: false })
  marked.use({
    renderer: {
      // A block of raw HTML is a paragraph of text; inline HTML, text in its line.
      html: (token) =>
        'block' in token && token.block ? `<p>${escapeHtml(token.text)}</p>\n` : escapeHtml(token.text),
      link(token) {
        const label = this.parser.parseInline(token.tokens)
        if (!safeHref(token.href)) return `${label} (${escapeHtml(token.href)})`
        const title = token.title ? ` title="${escapeHtml(token.title)}"` : ''
        return `<a href="${escapeHtml(token.href)}"${title} rel="noopener noreferrer">${label}</a>`
      },
      image(token) {
        const label = `image: ${escapeHtml(token.text)}`
        return safeHref(token.href)
          ? `<a href="${escapeHtml(token.href)}" rel="noopener noreferrer">${label}</a>`
          : `${label} (${escapeHtml(token.href)})`
      },
    },
  })
  return (markdown) => marked.parse(terminalText(markdown), { async: false })
}
