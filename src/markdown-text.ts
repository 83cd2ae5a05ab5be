/**
 * Text from outside myc (the model's replies, tool calls and results,
 * session files) placed in Markdown that myc writes (`myc sessions export
 * --format md`, `/export md`). It must stay what it is: a tool result
 * cannot close its fence and go on as Markdown, a reply cannot make a
 * `javascript:` link or raw HTML, and a name cannot leave its code span.
 */

/** The longest run of backticks in `text` (0 when none). */
function longestBacktickRun(text: string): number {
  let longest = 0
  for (const run of text.match(/`+/g) ?? []) longest = Math.max(longest, run.length)
  return longest
}

/**
 * `text` as a fenced code block: the fence a backtick run longer than any in
 * the text (at least three), so nothing in it closes the block. `info` is
 * the language (`json`).
 */
export function fencedBlock(text: string, info = ''): string {
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1))
  return `${fence}${info}\n${text}\n${fence}`
}

/**
 * `text` as an inline code span, on one line: delimited by a backtick run
 * longer than any in it (padded with a space when it starts or ends with a
 * backtick), line breaks as spaces (a blank line would end the span's
 * paragraph).
 */
export function codeSpan(text: string): string {
  const oneLine = text.replace(/\r\n|[\r\n]/g, ' ')
  const ticks = '`'.repeat(longestBacktickRun(oneLine) + 1)
  const pad = oneLine.startsWith('`') || oneLine.endsWith('`') ? ' ' : ''
  return `${ticks}${pad}${oneLine}${pad}${ticks}`
}

/**
 * Plain text inside a line of Markdown (a heading, after a label), kept on
 * that line: line breaks as spaces; the characters that make emphasis,
 * code, links, HTML, entities or tables escaped; and what would start a
 * block at the start of the line (a list marker, a heading, a quote, a
 * setext underline) escaped too.
 */
export function inlineText(text: string): string {
  return text
    .replace(/\r\n|[\r\n]/g, ' ')
    .replace(/[\\`*_[\]<>!&|~#]/g, (c) => (c === '&' ? '&amp;' : `\\${c}`))
    .replace(/^(\s*)([-+=])/, '$1\\$2')
    .replace(/^(\s*\d+)([.)])/, '$1\\$2')
}

/**
 * Whether a link destination may stay a link: `http:`, `https:` and
 * `mailto:` URLs, and relative references (no scheme: nothing before the
 * first `:` but what a path may hold). An entity or a backslash before the
 * first `/`, `?` or `#` counts as a scheme in disguise (`java&#115;cript:`).
 */
export function allowedLinkDestination(destination: string): boolean {
  const d = destination.replace(/^[\s<]+/, '')
  return /^(?:https?:\/\/|mailto:)/i.test(d) || /^[^:&\\\s]*(?:[/?#]|$)/.test(d)
}

/** A CommonMark line ending: LF, CRLF or a lone CR. */
const LINE_END = /\r\n|\r|\n/

/** A line that opens a fenced code block: up to three spaces, three or more backticks (an info string without backticks) or tildes. */
const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/

/**
 * Markdown text from outside myc, made safe to place in myc's Markdown.
 * Nothing in it can be a link, image or reference definition whose
 * destination is not {@link allowedLinkDestination} (those are left as
 * text: `]\(`, `\[`), raw HTML or an autolink (`<` is written `\<`). Its
 * fenced code blocks are written again as {@link fencedBlock}s (the text
 * in them as it was, a fence it leaves open closed), so they end where they
 * look like they end. Its code spans stay when they open and close on one
 * line; a backtick run that does not is written as text (`` \` ``), so that
 * what is code here is code for any Markdown reader, and the rest is made
 * safe. Every line ending is a newline. Put the result in a container of
 * its own ({@link quoteBlock}) so its headings and blocks stay inside it.
 */
export function safeMarkdown(text: string): string {
  const lines = text.split(LINE_END)
  const out: string[] = []
  let prose: string[] = []
  const flush = () => {
    if (prose.length > 0) out.push(safeProse(prose.join('\n')))
    prose = []
  }
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i]!)
    if (!open || (open[2]![0] === '`' && open[3]!.includes('`'))) {
      prose.push(lines[i]!)
      continue
    }
    flush()
    const [, indent, fence, info] = open as unknown as [string, string, string, string]
    const body: string[] = []
    for (i++; i < lines.length; i++) {
      const close = /^ {0,3}(`+|~+)[ \t]*$/.exec(lines[i]!)
      if (close && close[1]![0] === fence[0] && close[1]!.length >= fence.length) break
      // As a Markdown reader does: the fence's indentation comes off its lines.
      body.push(lines[i]!.replace(new RegExp(`^ {0,${indent.length}}`), ''))
    }
    // A blank line before and after: the block starts and ends here whatever came before it (a paragraph, a list item).
    out.push('', fencedBlock(body.join('\n'), /^[\w#+.-]*/.exec(info.trim())![0]), '')
  }
  flush()
  return out.join('\n').replace(/^\n+|\n+$/g, '')
}

/**
 * Prose (no fenced blocks): code spans that open and close on one line kept
 * as they are, every other backtick escaped; outside them, `<` escaped (no
 * raw HTML, no autolinks), and links and reference definitions made text.
 */
function safeProse(text: string): string {
  let out = ''
  let plain = ''
  const emitPlain = () => {
    out += safeOutsideCode(plain)
    plain = ''
  }
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    // A backslash escape (before ASCII punctuation) is one character of text: an escaped backtick opens nothing.
    if (c === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1]!)) {
      plain += text.slice(i, i + 2)
      i += 2
      continue
    }
    if (c !== '`') {
      // Raw HTML (tags, comments, declarations) and autolinks: as text.
      plain += c === '<' ? '\\<' : c
      i++
      continue
    }
    const run = /^`+/.exec(text.slice(i))![0]
    const lineEnd = text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i)
    const close = closingRun(text, i + run.length, lineEnd, run.length)
    // Not kept as a span (its backticks written as text): one that does not close on its line; one a GFM reader may split at a `|`
    // (a table cell); one that opens inside what a GFM reader may take for a URL (`https://x/`…), which runs on over the backtick.
    const word = /[^\s<]*$/.exec(text.slice(0, i))![0]
    if (close === -1 || text.slice(i, close).includes('|') || /:\/\/|www\.|@|:/i.test(word)) {
      plain += '\\`'.repeat(run.length)
      i += run.length
      continue
    }
    emitPlain()
    out += text.slice(i, close + run.length)
    i = close + run.length
  }
  emitPlain()
  return out
}

/** Where the next backtick run of exactly `length` starts in text[from, to), or -1. */
function closingRun(text: string, from: number, to: number, length: number): number {
  const runs = /`+/g
  runs.lastIndex = from
  for (let m = runs.exec(text); m && m.index < to; m = runs.exec(text))
    if (m[0].length === length && m.index + length <= to) return m.index
  return -1
}

/** Text outside code (its `<` escaped already): the links and definitions it may not have, left as text. */
function safeOutsideCode(text: string): string {
  return (
    text
      // Inline links and images: `](destination`, the destination maybe on the next line.
      .replace(/\]\((\s*)([^)\s]*)/g, (all, space: string, destination: string) =>
        allowedLinkDestination(destination) ? all : `]\\(${space}${destination}`,
      )
      // Reference definitions: `[label]: destination`, the destination maybe on the next line; wherever one may be (after a list marker, in a quote), so anywhere.
      .replace(
        /(?<!\\)\[((?:[^\]\\]|\\.)*)\]:([ \t]*\n?[ \t]*)(\S*)/g,
        (all, label: string, space: string, destination: string) =>
          allowedLinkDestination(destination) ? all : `\\[${label}]:${space}${destination}`,
      )
  )
}

/** `text` as a block quote: every line (a lone CR and CRLF are line endings too) prefixed with `> `, so what is inside stays inside. */
export function quoteBlock(text: string): string {
  return text
    .split(LINE_END)
    .map((line) => (line === '' ? '>' : `> ${line}`))
    .join('\n')
}
