import path from 'node:path'
import { isMap, parseDocument } from 'yaml'
import { MycError } from '../errors.js'

/**
 * Adds server entries to a config file's text and changes nothing else: a
 * JSON or JSONC file keeps its comments, trailing commas, indentation and
 * the style of its entries (one line each, or spread out); a YAML file
 * keeps its comments. The text is edited, never written anew from a parse.
 */
export function addServersToText(text: string, file: string, entries: readonly [string, unknown][]): string {
  const ext = path.extname(file).toLowerCase()
  if (ext === '.yaml' || ext === '.yml') return addToYaml(text, file, entries)
  let out = text
  for (const [key, entry] of entries) out = addToJsonc(out, file, key, entry)
  return out
}

function addToYaml(text: string, file: string, entries: readonly [string, unknown][]): string {
  const doc = parseDocument(text)
  if (doc.errors.length > 0) throw unreadable(file, doc.errors[0]!.message)
  if (doc.contents !== null && !isMap(doc.contents)) throw unreadable(file, 'its top level is not a mapping')
  for (const [key, entry] of entries) doc.setIn(['mcpServers', key], doc.createNode(entry))
  return String(doc)
}

function unreadable(file: string, why: string): MycError {
  return new MycError('config_invalid', `cannot add to ${file}: ${why}`, {
    fix: 'fix the file, then run myc add again',
  })
}

/** A member of a JSONC object: its key and where its value is. */
interface Member {
  key: string
  keyStart: number
  valueStart: number
  valueEnd: number
}

/** A JSONC object in a text: its braces and members. */
interface ObjectSpan {
  open: number
  close: number
  members: Member[]
}

/** A small reader of JSONC structure: it finds objects and their members, skipping strings and comments. */
class Jsonc {
  constructor(readonly text: string) {}

  /** The first index at or after `i` that is neither white space nor inside a comment. */
  skip(i: number): number {
    const t = this.text
    for (;;) {
      while (i < t.length && /\s/.test(t[i]!)) i++
      if (t.startsWith('//', i)) {
        const end = t.indexOf('\n', i)
        i = end === -1 ? t.length : end
      } else if (t.startsWith('/*', i)) {
        const end = t.indexOf('*/', i + 2)
        i = end === -1 ? t.length : end + 2
      } else return i
    }
  }

  /** The index just past the string that starts at `i`. */
  stringEnd(i: number): number {
    let j = i + 1
    while (j < this.text.length && this.text[j] !== '"') j += this.text[j] === '\\' ? 2 : 1
    return j + 1
  }

  /** The index just past the value that starts at `i`. */
  valueEnd(i: number): number {
    const c = this.text[i]
    if (c === '"') return this.stringEnd(i)
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']'
      let j = this.skip(i + 1)
      while (j < this.text.length && this.text[j] !== close) {
        j = this.skip(this.valueEnd(j))
        if (this.text[j] === ':' || this.text[j] === ',') j = this.skip(j + 1)
      }
      return j + 1
    }
    let j = i
    while (j < this.text.length && !/[\s,}\]/]/.test(this.text[j]!)) j++
    return Math.max(j, i + 1)
  }

  /** The object whose `{` is at `open`, with its members. */
  object(open: number): ObjectSpan {
    const members: Member[] = []
    let i = this.skip(open + 1)
    while (i < this.text.length && this.text[i] === '"') {
      const keyEnd = this.stringEnd(i)
      const key = JSON.parse(this.text.slice(i, keyEnd)) as string
      const colon = this.skip(keyEnd)
      const valueStart = this.skip(colon + 1)
      const valueEnd = this.valueEnd(valueStart)
      members.push({ key, keyStart: i, valueStart, valueEnd })
      i = this.skip(valueEnd)
      if (this.text[i] === ',') i = this.skip(i + 1)
    }
    if (this.text[i] !== '}') throw new Error(`unexpected text at offset ${i}`)
    return { open, close: i, members }
  }

  /** The white space before `at` on its line, when only white space is there; else undefined. */
  lineIndent(at: number): string | undefined {
    const start = this.text.lastIndexOf('\n', at - 1) + 1
    const before = this.text.slice(start, at)
    return /^[ \t]*$/.test(before) ? before : undefined
  }
}

/** One member added to the JSONC text: into `mcpServers` (made when absent), in the style around it. */
function addToJsonc(text: string, file: string, key: string, entry: unknown): string {
  if (text.trim() === '') return `${JSON.stringify({ mcpServers: { [key]: entry } }, null, 2)}\n`
  const reader = new Jsonc(text)
  const bom = text.startsWith('\uFEFF') ? 1 : 0
  const start = reader.skip(bom)
  if (text[start] !== '{') throw unreadable(file, 'its top level is not an object')
  let top: ObjectSpan
  try {
    top = reader.object(start)
  } catch (error) {
    throw unreadable(file, (error as Error).message)
  }
  const unit = unitOf(reader, top)
  const servers = top.members.find((m) => m.key === 'mcpServers')
  if (servers && text[servers.valueStart] === '{')
    return insertMember(reader, reader.object(servers.valueStart), key, entry, unit)
  if (servers) throw unreadable(file, '"mcpServers" is not an object')
  // A new mcpServers object is spread out unless the file is on one line: its entries are what people read.
  return insertMember(reader, top, 'mcpServers', { [key]: entry }, unit, true)
}

/** The indentation unit of a file: that of its top level's first member, else two spaces. */
function unitOf(reader: Jsonc, top: ObjectSpan): string {
  const first = top.members[0]
  const indent = first ? reader.lineIndent(first.keyStart) : undefined
  return indent !== undefined && indent !== '' ? indent : '  '
}

/** `text` with `"key": value` added as the last member of `object`, written the way its members are. */
function insertMember(
  reader: Jsonc,
  object: ObjectSpan,
  key: string,
  value: unknown,
  unit: string,
  spread = false,
): string {
  const { text } = reader
  const { members, open, close } = object
  const last = members.at(-1)
  const afterLast = last ? reader.skip(last.valueEnd) : undefined
  const trailingComma = afterLast !== undefined && text[afterLast] === ','
  const closeIndent = reader.lineIndent(close)
  const first = members[0]
  const indent = (first && reader.lineIndent(first.keyStart)) ?? `${closeIndent ?? ''}${unit}`
  const oneLine = !spread && first !== undefined && !text.slice(first.valueStart, first.valueEnd).includes('\n')
  const valueText = oneLine || closeIndent === undefined ? compactJson(value) : spreadJson(value, indent, unit)
  const member = `${JSON.stringify(key)}: ${valueText}`
  if (closeIndent === undefined) {
    // The closing brace shares its line with other text: the member goes in on that line.
    if (!last) return `${text.slice(0, open + 1)} ${member} ${text.slice(close)}`
    const at = trailingComma ? afterLast! + 1 : last.valueEnd
    return `${text.slice(0, at)}${trailingComma ? ' ' : ', '}${member}${trailingComma ? ',' : ''}${text.slice(at)}`
  }
  // On a line of its own before the closing brace's line; a comma after the last member when it had none.
  const lineStart = text.lastIndexOf('\n', close - 1) + 1
  const before =
    last && !trailingComma
      ? `${text.slice(0, last.valueEnd)},${text.slice(last.valueEnd, lineStart)}`
      : text.slice(0, lineStart)
  const newline = lineStart === 0 || text[lineStart - 1] !== '\n' ? '\n' : ''
  return `${before}${newline}${indent}${member}${trailingComma ? ',' : ''}\n${text.slice(lineStart)}`
}

/** JSON on one line, spaced as people write it: `{ "command": "npx", "args": ["-y", "pkg"] }`. */
export function compactJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(compactJson).join(', ')}]`
  if (value !== null && typeof value === 'object') {
    const parts = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${compactJson(v)}`)
    return parts.length ? `{ ${parts.join(', ')} }` : '{}'
  }
  return JSON.stringify(value)
}

/** JSON over several lines, indented by `unit`, its lines after the first starting at `indent`. */
function spreadJson(value: unknown, indent: string, unit: string): string {
  return JSON.stringify(value, null, unit).split('\n').join(`\n${indent}`)
}
