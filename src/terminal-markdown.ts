import { terminalText } from './terminal-text.js'

/**
 * A model's Markdown shown on a terminal: bold, italic, strikethrough and
 * code in their terminal styles (or plain with colour off), headings bold,
 * list items with a bullet, quotes and code blocks set off, links as their
 * text followed by the address; the markup itself (`**`, backticks, fences)
 * not shown. It works line by line, so a streamed reply is shown one
 * finished line at a time. Every piece of the text goes through
 * {@link terminalText}: control characters are shown, never obeyed; the
 * only escape codes written are the styles added here.
 */
export function terminalMarkdown(options: { colour: boolean }): { write(piece: string): string; end(): string } {
  const style = styles(options.colour)
  const state: BlockState = {}
  let held = ''
  const render = (line: string) => renderLine(line.replace(/\r$/, ''), state, style)
  return {
    write(piece) {
      held += piece
      const cut = held.lastIndexOf('\n')
      if (cut === -1) return ''
      const lines = held.slice(0, cut).split('\n')
      held = held.slice(cut + 1)
      return lines.flatMap((line) => render(line) ?? []).join('')
    },
    end() {
      const rest = held === '' ? '' : (render(held) ?? '').replace(/\n$/, '')
      held = ''
      state.fence = undefined
      return rest
    },
  }
}

/** Where the text is between lines: inside a fenced code block (its fence), or not. */
interface BlockState {
  fence?: { char: string; length: number } | undefined
}

/** SGR on and off codes per style; empty strings with colour off. */
interface Styles {
  bold: [string, string]
  italic: [string, string]
  strike: [string, string]
  code: [string, string]
  dim: [string, string]
}

function styles(colour: boolean): Styles {
  const sgr = (on: number, off: number): [string, string] => (colour ? [`\u001b[${on}m`, `\u001b[${off}m`] : ['', ''])
  return { bold: sgr(1, 22), italic: sgr(3, 23), strike: sgr(9, 29), code: sgr(36, 39), dim: sgr(2, 22) }
}

const wrap = ([on, off]: [string, string], text: string) => `${on}${text}${off}`

/** One line as shown, with its newline; undefined for a line that shows nothing (a code fence). */
function renderLine(line: string, state: BlockState, style: Styles): string | undefined {
  const fence = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line)
  if (state.fence) {
    const closes = fence && fence[1]![0] === state.fence.char && fence[1]!.length >= state.fence.length
    if (closes && fence[2]!.trim() === '') {
      state.fence = undefined
      return undefined
    }
    return `${wrap(style.code, `    ${terminalText(line)}`)}\n`
  }
  if (fence && !(fence[1]![0] === '`' && fence[2]!.includes('`'))) {
    state.fence = { char: fence[1]![0]!, length: fence[1]!.length }
    return undefined
  }
  return `${renderBlock(line, style)}\n`
}

/** A line outside code blocks: its block marker (heading, rule, quote, list item) as shown, then its inline text. */
function renderBlock(line: string, style: Styles): string {
  const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line)
  if (heading) return wrap(style.bold, inline(heading[1]!, style))
  if (/^ {0,3}([-*_])([ \t]*\1){2,}[ \t]*$/.test(line)) return wrap(style.dim, '─'.repeat(40))
  const quote = /^ {0,3}>[ \t]?(.*)$/.exec(line)
  if (quote) return `${wrap(style.dim, '│')} ${renderBlock(quote[1]!, style)}`
  const bullet = /^([ \t]*)[-*+][ \t]+(?:\[([ xX])\][ \t]+)?(.*)$/.exec(line)
  if (bullet) {
    const box = bullet[2] === undefined ? '' : bullet[2] === ' ' ? '☐ ' : '☑ '
    return `${bullet[1]}• ${box}${inline(bullet[3]!, style)}`
  }
  const numbered = /^([ \t]*)(\d{1,9})[.)][ \t]+(.*)$/.exec(line)
  if (numbered) return `${numbered[1]}${numbered[2]}. ${inline(numbered[3]!, style)}`
  return inline(line, style)
}

/** Delimiters of emphasis, strongest first, and their style. */
const EMPHASIS: ReadonlyArray<[string, keyof Styles]> = [
  ['**', 'bold'],
  ['__', 'bold'],
  ['~~', 'strike'],
  ['*', 'italic'],
  ['_', 'italic'],
]

/** Inline Markdown of one line: escapes, code spans, emphasis, links and autolinks; anything else as text. */
function inline(text: string, style: Styles): string {
  let out = ''
  let plain = ''
  const flush = () => {
    out += terminalText(plain)
    plain = ''
  }
  for (let i = 0; i < text.length;) {
    const token = inlineToken(text, i, style)
    if (token) {
      flush()
      out += token.shown
      i = token.end
      continue
    }
    plain += text[i]
    i++
  }
  flush()
  return out
}

/** The inline construct that starts at `i`, as shown, and where it ends; undefined when none does (the character is text). */
function inlineToken(text: string, i: number, style: Styles): { shown: string; end: number } | undefined {
  const c = text[i]!
  if (c === '\\' && /[!-/:-@[-`{-~]/.test(text[i + 1] ?? '')) return { shown: terminalText(text[i + 1]!), end: i + 2 }
  if (c === '`') return codeSpan(text, i, style)
  if (c === '[' || (c === '!' && text[i + 1] === '[')) return link(text, i, style)
  if (c === '<') {
    const auto = /^<((?:https?|mailto):[^\s<>]+)>/i.exec(text.slice(i))
    return auto ? { shown: terminalText(auto[1]!), end: i + auto[0].length } : undefined
  }
  for (const [delimiter, name] of EMPHASIS)
    if (text.startsWith(delimiter, i)) return emphasis(text, i, delimiter, name, style)
  return undefined
}

/** A code span: a backtick run closed by one of the same length on the line; the code in the code style (in backticks with colour off). */
function codeSpan(text: string, i: number, style: Styles): { shown: string; end: number } | undefined {
  const run = /^`+/.exec(text.slice(i))![0]
  const close = text.indexOf(run, i + run.length)
  if (close === -1 || text[close + run.length] === '`') return { shown: terminalText(run), end: i + run.length }
  let code = text.slice(i + run.length, close)
  if (/^ .*[^ ].* $/.test(code)) code = code.slice(1, -1)
  const shown = style.code[0] ? wrap(style.code, terminalText(code)) : `\`${terminalText(code)}\``
  return { shown, end: close + run.length }
}

/** `[text](address)` and `![alt](address)`: the text, then the address in brackets (once when they are the same). */
function link(text: string, i: number, style: Styles): { shown: string; end: number } | undefined {
  const image = text[i] === '!'
  const m = /^!?\[((?:[^\]\\]|\\.)*)\]\(\s*<?([^\s()<>]*(?:\([^\s()]*\)[^\s()<>]*)*)>?(?:\s+"[^"]*")?\s*\)/.exec(
    text.slice(i),
  )
  if (!m) return undefined
  const label = inline(m[1]!, style)
  const address = m[2]!
  const same = m[1] === address || address === ''
  const shown = `${image ? 'image: ' : ''}${label}${same ? '' : ` ${wrap(style.dim, `(${terminalText(address)})`)}`}`
  return { shown, end: i + m[0].length }
}

/** Emphasis opened at `i` by `delimiter` and closed on the line: its text (inline Markdown too) in the style. */
function emphasis(
  text: string,
  i: number,
  delimiter: string,
  name: keyof Styles,
  style: Styles,
): { shown: string; end: number } | undefined {
  const start = i + delimiter.length
  // Opens only before text (not a space), and an underscore not inside a word (snake_case stays as it is).
  if (start >= text.length || /\s/.test(text[start]!)) return undefined
  if (delimiter[0] === '_' && /[\p{L}\p{N}]/u.test(text[i - 1] ?? '')) return undefined
  for (let close = text.indexOf(delimiter, start); close !== -1; close = text.indexOf(delimiter, close + 1)) {
    if (/\s/.test(text[close - 1]!)) continue
    // A single delimiter is not half of a double one (`*a **b** c*` closes at the last `*`).
    if (delimiter.length === 1 && (text[close + 1] === delimiter || text[close - 1] === delimiter)) continue
    if (delimiter[0] === '_' && /[\p{L}\p{N}]/u.test(text[close + 1] ?? '')) continue
    if (close === start) return undefined
    return { shown: wrap(style[name], inline(text.slice(start, close), style)), end: close + delimiter.length }
  }
  return undefined
}
