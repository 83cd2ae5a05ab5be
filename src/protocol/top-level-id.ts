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
