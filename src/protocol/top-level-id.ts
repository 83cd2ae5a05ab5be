import type { RequestId } from '@modelcontextprotocol/client'

/** The longest string id a scanner keeps (longer ones are not read: the answer's id is then null). */
const MAX_ID_CHARS = 1024

/**
 * Finds the top-level `"id"` of a JSON object in text fed piece by piece,
 * wherever the id sits: before or after an over-deep or oversized value
 * (whose text is walked, never kept). Key order must not decide whether a
 * request gets its own id back. As JSON.parse, the last `"id"` wins. A value
 * that is not a string or a safe integer is no id (null).
 */
export class TopLevelIdScanner {
  private depth = 0
  private started = false
  private notObject = false
  private inString = false
  private escaped = false
  /** The text of a string at depth 1 (a key or a value), while short enough to be an id. */
  private text: string | undefined = ''
  private lastKey: string | undefined
  /** At depth 1: reading a key, or a value (after ':'). */
  private expecting: 'key' | 'value' = 'key'
  private valueKey: string | undefined
  private number = ''
  private found: RequestId | null = null

  feed(chunk: string): void {
    for (let i = 0; i < chunk.length; i++) this.step(chunk[i]!)
  }

  /** The id found so far (null when none could be read). */
  id(): RequestId | null {
    this.endNumber()
    return this.notObject ? null : this.found
  }

  private step(c: string): void {
    if (this.inString) {
      if (this.escaped) this.escaped = false
      else if (c === '\\') this.escaped = true
      else if (c === '"') return this.endString()
      if (this.depth === 1 && this.text !== undefined)
        this.text = this.text.length < MAX_ID_CHARS * 6 ? this.text + c : undefined
      return
    }
    if (!this.started) {
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') return
      this.started = true
      if (c !== '{') this.notObject = true
    }
    if (this.depth === 1 && this.expecting === 'value' && this.valueKey === 'id' && /[-0-9.eE+]/.test(c)) {
      this.number += c
      return
    }
    this.endNumber()
    switch (c) {
      case '"':
        this.inString = true
        this.text = ''
        return
      case '{':
      case '[':
        this.depth++
        return
      case '}':
      case ']':
        this.depth--
        return
      case ':':
        if (this.depth === 1) {
          this.expecting = 'value'
          this.valueKey = this.lastKey
        }
        return
      case ',':
        if (this.depth === 1) {
          this.expecting = 'key'
          this.valueKey = undefined
        }
        return
      default:
        // true, false, null and whitespace: a value other than a string or number is no id.
        if (this.depth === 1 && this.expecting === 'value' && this.valueKey === 'id' && /[a-z]/.test(c))
          this.found = null
    }
  }

  private endString(): void {
    this.inString = false
    if (this.depth !== 1) return
    const raw = this.text
    if (this.expecting === 'key') {
      this.lastKey = raw === 'id' ? 'id' : raw === undefined ? undefined : raw.length <= 8 ? decode(raw) : raw
      return
    }
    if (this.valueKey !== 'id') return
    const value = raw === undefined ? undefined : decode(raw)
    this.found = value !== undefined && value.length <= MAX_ID_CHARS ? value : null
    this.valueKey = undefined
  }

  private endNumber(): void {
    if (this.number === '') return
    const n = Number(this.number)
    this.found = /^-?(0|[1-9]\d*)$/.test(this.number) && Number.isSafeInteger(n) ? n : null
    this.number = ''
    this.valueKey = undefined
  }
}

function decode(raw: string): string | undefined {
  try {
    return JSON.parse(`"${raw}"`) as string
  } catch {
    return undefined
  }
}

/** The top-level id of a whole message's text (see TopLevelIdScanner). */
export function topLevelId(text: string): RequestId | null {
  const scanner = new TopLevelIdScanner()
  scanner.feed(text)
  return scanner.id()
}

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * The top-level id of a message's UTF-8 bytes, as topLevelId finds it in
 * text, without decoding the bytes: structure is ASCII, and no byte of a
 * multi-byte character is, so strings are skipped with a native search for
 * their closing quote and only the id's own bytes are ever decoded. A
 * 4 MB body takes about a millisecond (the text scanner, a tenth of a
 * second), and makes no copy of it.
 */
export function topLevelIdOfBytes(bytes: Uint8Array): RequestId | null {
  const scan = new ByteScan(bytes)
  return scan.run()
}

/**
 * The top-level id in a body's first bytes, when its value is whole in
 * them (it ends before they do): a request whose id comes early, as
 * clients write it, can be refused for that id before the rest of its
 * body arrives. Undefined when `bytes` hold no whole top-level id, or its
 * value is no id. A later `"id"` member of the same body is not looked for.
 */
export function leadingIdOfBytes(bytes: Uint8Array): RequestId | undefined {
  return new ByteScan(bytes, true).run() ?? undefined
}

/** The state of one topLevelIdOfBytes. */
class ByteScan {
  private depth = 0
  private expecting: 'key' | 'value' = 'key'
  private lastKey: string | undefined
  private valueKey: string | undefined
  private found: RequestId | null = null
  private readonly decoder = new TextDecoder('utf-8')
  /** Leading mode: the scan stopped at the first top-level id's value. */
  private stopped = false

  /** `leading`: stop at the first top-level id's value (null unless it ends within the bytes). */
  constructor(
    private readonly bytes: Uint8Array,
    private readonly leading = false,
  ) {}

  run(): RequestId | null {
    const { bytes } = this
    let i = 0
    while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++
    if (bytes[i] !== 0x7b) return null
    while (i < bytes.length && !this.stopped) {
      const c = bytes[i]!
      if (c === QUOTE) i = this.string(i)
      else if (this.depth === 1 && this.expecting === 'value' && this.valueKey === 'id' && isNumberByte(c))
        i = this.number(i)
      else i = this.structure(c, i)
    }
    return this.leading && !this.stopped ? null : this.found
  }

  /** In leading mode, the id's value was read: the scan stops there, with no id unless the value ended within the bytes. */
  private settle(whole: boolean): void {
    if (!this.leading) return
    this.stopped = true
    if (!whole) this.found = null
  }

  /** A string from its opening quote at `at`: a top-level key or the id's value is read; any other is skipped. Returns where it ends. */
  private string(at: number): number {
    const end = this.closingQuote(at + 1)
    if (this.depth !== 1) return end + 1
    if (this.expecting === 'key') {
      this.lastKey = end - at - 1 <= 6 * 8 ? this.decode(at + 1, end) : undefined
    } else if (this.valueKey === 'id') {
      const value = end - at - 1 <= MAX_ID_CHARS * 6 ? this.decode(at + 1, end) : undefined
      this.found = value !== undefined && value.length <= MAX_ID_CHARS ? value : null
      this.valueKey = undefined
      this.settle(end < this.bytes.length)
    }
    return end + 1
  }

  /** Where the string whose text starts at `from` closes (a quote after an even run of backslashes), or the end of the bytes. */
  private closingQuote(from: number): number {
    const { bytes } = this
    let at = from
    for (;;) {
      const quote = bytes.indexOf(QUOTE, at)
      if (quote < 0) return bytes.length
      let slashes = 0
      while (quote - slashes - 1 >= from && bytes[quote - slashes - 1] === BACKSLASH) slashes++
      if (slashes % 2 === 0) return quote
      at = quote + 1
    }
  }

  /** The id's number from `at`: a safe integer, else no id. Returns where it ends. */
  private number(at: number): number {
    let end = at
    while (end < this.bytes.length && isNumberByte(this.bytes[end]!)) end++
    const text = this.decoder.decode(this.bytes.subarray(at, end))
    const n = Number(text)
    this.found = /^-?(0|[1-9]\d*)$/.test(text) && Number.isSafeInteger(n) ? n : null
    this.valueKey = undefined
    this.settle(end < this.bytes.length)
    return end
  }

  private structure(c: number, at: number): number {
    if (c === 0x7b || c === 0x5b) this.depth++
    else if (c === 0x7d || c === 0x5d) this.depth--
    else if (this.depth === 1 && c === 0x3a) {
      this.expecting = 'value'
      this.valueKey = this.lastKey
    } else if (this.depth === 1 && c === 0x2c) {
      this.expecting = 'key'
      this.valueKey = undefined
    } else if (this.depth === 1 && this.expecting === 'value' && this.valueKey === 'id' && c >= 0x61 && c <= 0x7a) {
      // true, false, null: a value other than a string or number is no id.
      this.found = null
      this.settle(false)
    }
    return at + 1
  }

  private decode(from: number, to: number): string | undefined {
    return decode(this.decoder.decode(this.bytes.subarray(from, to)))
  }
}

/** A byte of a JSON number: - + . 0-9 e E. */
function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45
}
