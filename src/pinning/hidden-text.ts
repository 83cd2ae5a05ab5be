/**
 * Text a person cannot see but a model reads (docs/pinning.md, "Hidden
 * text"): Unicode tag characters (U+E0000–U+E007F, invisible, read by models
 * as ASCII), the bidi embeddings, overrides and isolates (U+202A–U+202E,
 * U+2066–U+2069: a line that shows one thing and says another), and the C0
 * and C1 control characters but newline, carriage return and tab (ESC and
 * U+009B start terminal escapes; DEL too). Emoji (with their joiners and
 * variation selectors), accents and every script are ordinary text.
 */
export type HiddenTextKind = 'tag' | 'bidi' | 'control'

/** In the order they are reported. */
const HIDDEN_TEXT_KINDS: readonly HiddenTextKind[] = ['tag', 'bidi', 'control']

/** How each kind is named to a person. */
export const HIDDEN_TEXT_NAMES: Readonly<Record<HiddenTextKind, string>> = {
  tag: 'tag characters',
  bidi: 'bidi controls',
  control: 'control characters',
}

const PATTERNS: Readonly<Record<HiddenTextKind, RegExp>> = {
  tag: /[\u{E0000}-\u{E007F}]/u,
  bidi: /[\u202A-\u202E\u2066-\u2069]/,
  // eslint-disable-next-line no-control-regex
  control: /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/,
}

/** The kinds of hidden text in one string. */
export function hiddenTextIn(text: string): HiddenTextKind[] {
  return HIDDEN_TEXT_KINDS.filter((kind) => PATTERNS[kind].test(text))
}

/**
 * The kinds of hidden text anywhere in a JSON value: every string and every
 * object key, at any depth (a schema's property names and descriptions
 * too). Walks with its own stack, so a deep schema cannot exhaust the call
 * stack.
 */
export function hiddenTextOf(value: unknown): HiddenTextKind[] {
  const found = new Set<HiddenTextKind>()
  const stack: unknown[] = [value]
  while (stack.length > 0 && found.size < HIDDEN_TEXT_KINDS.length) {
    const item = stack.pop()
    if (typeof item === 'string') for (const kind of hiddenTextIn(item)) found.add(kind)
    else if (Array.isArray(item)) for (const inner of item) stack.push(inner)
    else if (item !== null && typeof item === 'object')
      for (const [key, inner] of Object.entries(item)) stack.push(key, inner)
  }
  return HIDDEN_TEXT_KINDS.filter((kind) => found.has(kind))
}

/** Text with its hidden characters shown as escapes (`\u{e0041}`, `\u202e`, `\x1b`), for a person to read. */
export function showHiddenText(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u{E0000}-\u{E007F}\u202A-\u202E\u2066-\u2069\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/gu,
    (c) => {
      const code = c.codePointAt(0)!
      if (code > 0xffff) return `\\u{${code.toString(16)}}`
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
    },
  )
}
