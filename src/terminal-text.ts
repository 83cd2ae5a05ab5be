/**
 * Text from outside myc (the model's replies, tool results, tool and server
 * names and descriptions, skill and memory text, session files, children's
 * errors) on its way to a terminal. A terminal obeys control characters:
 * `ESC ]52;c;…` writes the clipboard, `ESC ]0;…` the window title,
 * `ESC [8m` hides what follows, a lone CR or a backspace writes over what
 * was printed, and the bidi overrides reorder a line. So none of them
 * reaches the terminal as it is: each is shown as its escape (`\x1b`,
 * `\x9b`, `\u202e`), which is text the terminal prints. Newline and tab
 * stay; CRLF becomes a newline.
 *
 * myc's own colours are added after this, around text that went through it.
 * `--json` output keeps the exact text: see {@link jsonText}.
 */

/**
 * What is shown as its escape: C0 controls but tab and newline (CR alone
 * included, CRLF is kept as a newline), DEL, C1 controls (U+0080–U+009F: a
 * lone U+009B is a CSI), and the bidi controls (marks U+061C, U+200E,
 * U+200F; embeddings and overrides U+202A–U+202E; isolates U+2066–U+2069).
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** The escape that stands for `c` on the terminal: `\x1b`, `\u202e`. */
function visible(c: string): string {
  const code = c.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
}

/** `text` safe to write to a terminal: every control character but newline and tab shown as its escape. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, (c) => (c === '\r\n' ? '\n' : visible(c)))
}

/**
 * {@link terminalText} for text that arrives in pieces (a streamed reply):
 * a CR at the end of a piece waits for the next one, so CRLF split across
 * two pieces is still a newline. `end()` gives what is still held.
 */
export function terminalTextStream(): { write(piece: string): string; end(): string } {
  let held = ''
  return {
    write(piece) {
      const text = held + piece
      held = text.endsWith('\r') ? '\r' : ''
      return terminalText(held ? text.slice(0, -1) : text)
    },
    end() {
      const rest = held
      held = ''
      return terminalText(rest)
    },
  }
}

/**
 * The characters JSON.stringify leaves raw that a terminal still acts on (DEL,
 * C1, bidi controls; it escapes C0 itself), and the line separators some
 * readers split on. In JSON they only occur inside strings.
 */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069]/g

/**
 * `JSON.stringify(value, null, indent)` with every control character
 * escaped (`\u009b`, `\u202e`): the same document, parsed, with the exact
 * text, and nothing in it a terminal acts on.
 */
export function jsonText(value: unknown, indent?: number): string {
  return String(JSON.stringify(value, null, indent)).replace(
    JSON_UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

/** SGR sequences (colours, and also conceal, blink…), for {@link logText}. */
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[0-9;:]*m|\u009b[0-9;:]*m/g

/**
 * A log line's text: SGR sequences dropped (citty colours parts of its own
 * messages, and a child's error may hide text with one: without them the
 * text is plain and visible), then {@link terminalText}.
 */
export function logText(text: string): string {
  return terminalText(text.replace(SGR, ''))
}
