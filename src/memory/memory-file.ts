import { createHash } from 'node:crypto'

/** The kinds of memory entry, in the order their sections appear in a file. */
export const MEMORY_TYPES = ['preference', 'fact', 'decision', 'note'] as const
export type MemoryType = (typeof MEMORY_TYPES)[number]

/** One remembered thing. `role` is the file it lives in. */
export interface MemoryEntry {
  id: string
  role: string
  type: MemoryType
  tags: string[]
  /** ISO 8601. */
  createdAt: string
  content: string
}

/** Something in a memory file that could not be read as entries: kept verbatim, reported by `myc memory lint`. */
export interface MemoryProblem {
  /** 1-based line in the file. */
  line: number
  message: string
}

/** A memory file as read: its entries, the parts kept as written, and what was wrong. */
export interface ParsedMemory {
  entries: MemoryEntry[]
  /** Blocks that did not parse, verbatim (written back under "Unparsed" so nothing is lost). */
  kept: string[]
  problems: MemoryProblem[]
}

const SECTION_TITLES: Record<MemoryType, string> = {
  preference: 'Preferences',
  fact: 'Facts',
  decision: 'Decisions',
  note: 'Notes',
}
/** Heading of the section that holds what did not parse; nothing under it is read as entries. */
const UNPARSED_TITLE = 'Unparsed (kept exactly as written; fix and move up, or delete)'
const ID = /^mem_[A-Za-z0-9_-]{1,64}$/
const ENTRY_HEADING = /^### \[(.*)\]\s*$/
const META = /^<!-- meta: (.*) -->\s*$/
/**
 * A line of content that would read as structure, for this parser or for
 * Markdown (CommonMark): a heading (`#`, up to three spaces in), a meta
 * comment, or a setext underline (`===`, `---`, which makes the line above
 * a heading). Written with one more backslash in front (Markdown shows the
 * line as text), read back without it.
 */
const STRUCTURE = String.raw`(?: {0,3}(?:#|<!-- meta:)| {0,3}(?:=+|-+)[ \t]*$)`
const NEEDS_ESCAPE = new RegExp(String.raw`^\\*${STRUCTURE}`)
const ESCAPED = new RegExp(String.raw`^\\+${STRUCTURE}`)

/** The type a section heading names (`## Facts`, `## fact`), or undefined. */
function sectionType(title: string): MemoryType | undefined {
  const t = title.trim().toLowerCase()
  return MEMORY_TYPES.find((type) => t === type || t === `${type}s`)
}

/** A stable id for an entry a person added by hand (same content, same id). */
export function handEntryId(content: string): string {
  return `mem_h${createHash('sha256').update(content).digest('hex').slice(0, 12)}`
}

function isIsoDate(value: unknown): value is string {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value))
}

/**
 * Reads a role's memory file (pure). Structure: `## <Type>s` sections holding
 * `### [mem_<id>]` entries, each its content then a one-line
 * `<!-- meta: {json} -->` comment. What a person writes by hand is read too:
 * an entry without the comment, or a paragraph under a section, is an entry
 * of that section's type (a note under no known section), with a stable id
 * made from its content and `fallbackTime` as its time. Anything else (text
 * before the first section, a broken comment, a repeated id) is kept verbatim
 * with a problem naming its line.
 */
export function parseMemoryFile(text: string, role: string, fallbackTime: string): ParsedMemory {
  return new MemoryReader(text.replace(/^\uFEFF/, '').split(/\r?\n/), role, fallbackTime).read()
}

/** An entry being read: its first line (1-based), its lines so far, its id (none when hand-written). */
interface Block {
  start: number
  lines: string[]
  id: string | undefined
  /** A hand-written paragraph, which a blank line ends. */
  paragraph: boolean
}

/** {@link parseMemoryFile}'s reading, a line at a time: a section heading, text before any section, an entry heading, an entry's line. */
class MemoryReader {
  private readonly entries: MemoryEntry[] = []
  private readonly kept: string[] = []
  private readonly problems: MemoryProblem[] = []
  private readonly seen = new Set<string>()
  private section: { type: MemoryType | undefined; title: string } | undefined
  private block: Block | undefined
  /** Before the first section. */
  private preamble = true

  constructor(
    private readonly lines: readonly string[],
    private readonly role: string,
    private readonly fallbackTime: string,
  ) {}

  read(): ParsedMemory {
    for (let i = 0; i < this.lines.length; i++) {
      const last = this.readLine(i)
      if (last === undefined) break
      i = last
    }
    this.finish()
    return { entries: this.entries, kept: this.kept, problems: this.problems }
  }

  /** Line `i`, and those a step takes with it: the index of the last line read, undefined when the rest is not read. */
  private readLine(i: number): number | undefined {
    const line = this.lines[i]!
    if (line.startsWith('## ')) return this.sectionHeading(i)
    if (this.preamble) return this.preambleLine(i)
    const heading = ENTRY_HEADING.exec(line)
    if (heading || line.startsWith('### ')) return this.entryHeading(i, heading)
    this.entryLine(i)
    return i
  }

  /** `## Title`: a section (a known type, else a problem), or `## Unparsed`, under which nothing is read. */
  private sectionHeading(i: number): number | undefined {
    this.finish()
    this.preamble = false
    const lineNo = i + 1
    const title = this.lines[i]!.slice(3).trim()
    if (title.startsWith('Unparsed')) {
      // Everything below stays exactly as written.
      const rest = trimBlank(this.lines.slice(i + 1))
      if (rest.length > 0) {
        this.kept.push(rest.join('\n'))
        this.problems.push({
          line: lineNo + 1,
          message: 'there is unparsed text under "## Unparsed": fix it and move it into a section, or delete it',
        })
      }
      return undefined
    }
    const type = sectionType(title)
    if (!type)
      this.problems.push({
        line: lineNo,
        message: `unknown section "${title}" (sections: ${MEMORY_TYPES.map((t) => SECTION_TITLES[t]).join(', ')}); its entries are read as notes unless their metadata says otherwise`,
      })
    this.section = { type, title }
    return i
  }

  /** Before the first section: the title, the last-modified line and blank lines pass; other text is kept as a problem, a paragraph at a time. */
  private preambleLine(i: number): number {
    const { lines } = this
    const line = lines[i]!
    if (
      line.trim() === '' ||
      (i === firstNonBlank(lines) && line.startsWith('# ')) ||
      line.startsWith('Last modified: ')
    )
      return i
    // Text before the first section: collect the paragraph and keep it.
    const start = i + 1
    const raw: string[] = []
    while (i < lines.length && lines[i]!.trim() !== '' && !lines[i]!.startsWith('## ')) raw.push(lines[i++]!)
    this.keep(
      start,
      raw,
      'text before the first section (## Preferences, ## Facts, ## Decisions or ## Notes) is not an entry',
    )
    return i - 1
  }

  /** `### [mem_id]` or `### Some title`: a new entry; `### [not an id]` keeps its block whole, as a problem. */
  private entryHeading(i: number, heading: RegExpExecArray | null): number {
    const { lines } = this
    const line = lines[i]!
    this.finish()
    const id = heading?.[1]
    if (heading && !ID.test(id!)) {
      // Not one of ours: keep the block whole.
      const start = i + 1
      const raw = [line]
      while (i + 1 < lines.length && !lines[i + 1]!.startsWith('## ') && !lines[i + 1]!.startsWith('### '))
        raw.push(lines[++i]!)
      this.keep(start, raw, `"${id}" is not an entry id (ids look like mem_ followed by letters, digits, "_" or "-")`)
      return i
    }
    // `### Some title` without an id: the title is part of a hand-written entry.
    this.block = heading
      ? { start: i + 1, lines: [line], id, paragraph: false }
      : { start: i + 1, lines: [line.slice(4)], id: undefined, paragraph: false }
    return i
  }

  /** A line in a section: part of the entry being read, or the start of a hand-written paragraph. */
  private entryLine(i: number): void {
    const line = this.lines[i]!
    if (this.block) {
      // A hand-written paragraph ends at a blank line; an entry with an id runs to the next heading.
      if (this.block.paragraph && line.trim() === '') this.finish()
      else this.block.lines.push(line)
      return
    }
    if (line.trim() === '') return
    this.block = { start: i + 1, lines: [line], id: undefined, paragraph: true }
  }

  /** Something that could not be read as an entry: kept verbatim, with a problem naming its line. */
  private keep(start: number, raw: string[], message: string): void {
    this.kept.push(trimBlank(raw).join('\n'))
    this.problems.push({ line: start, message })
  }

  /** The entry being read, checked: an entry, or kept with a problem (an empty hand-written one is dropped). */
  private finish(): void {
    if (!this.block) return
    const { start, id } = this.block
    const label = id ?? 'a hand-written entry'
    const raw = trimBlank(this.block.lines)
    this.block = undefined
    const split = splitMeta(trimBlank(id === undefined ? raw : raw.slice(1)))
    if (!split)
      return this.keep(
        start,
        raw,
        `the metadata comment of ${label} is not a JSON object (write it as <!-- meta: {"type":"note","tags":[],"createdAt":"2026-01-01T00:00:00.000Z"} -->, or delete the comment)`,
      )
    const { meta } = split
    const content = split.content
      .map((l) => (ESCAPED.test(l) ? l.slice(1) : l))
      .join('\n')
      .trimEnd()
    if (content.trim() === '') {
      if (id !== undefined)
        this.keep(start, raw, `${label} has no content (write it under the heading, or delete the entry)`)
      return
    }
    const type = meta?.type ?? this.section?.type ?? 'note'
    if (!MEMORY_TYPES.includes(type as MemoryType))
      return this.keep(start, raw, `${label} has type ${JSON.stringify(type)}; types: ${MEMORY_TYPES.join(', ')}`)
    const tags = meta?.tags ?? []
    if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string'))
      return this.keep(start, raw, `${label}: "tags" must be a list of strings`)
    const createdAt = meta?.createdAt ?? this.fallbackTime
    if (!isIsoDate(createdAt))
      return this.keep(start, raw, `${label}: "createdAt" must be an ISO 8601 time such as 2026-01-01T00:00:00.000Z`)
    const entryId = id ?? handEntryId(content)
    if (this.seen.has(entryId))
      return this.keep(start, raw, `id ${entryId} appears twice (give one a new id, e.g. ${entryId}b, or delete it)`)
    this.seen.add(entryId)
    this.entries.push({
      id: entryId,
      role: this.role,
      type: type as MemoryType,
      tags: tags as string[],
      createdAt,
      content,
    })
  }
}

/**
 * An entry's lines split at its metadata comment (the last line, when it is
 * one): the comment's object and the content before it. Undefined when the
 * comment is not a JSON object.
 */
function splitMeta(lines: string[]): { meta: Record<string, unknown> | undefined; content: string[] } | undefined {
  const last = lines.at(-1)
  const m = last === undefined ? null : META.exec(last)
  if (!m) return { meta: undefined, content: lines }
  let parsed: unknown
  try {
    parsed = JSON.parse(m[1]!)
  } catch {
    // Not JSON at all: the caller keeps the entry, with a problem naming it.
    return undefined
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined
  return { meta: parsed as Record<string, unknown>, content: trimBlank(lines.slice(0, -1)) }
}

function firstNonBlank(lines: readonly string[]): number {
  return lines.findIndex((l) => l.trim() !== '')
}

function trimBlank(lines: readonly string[]): string[] {
  let a = 0
  let b = lines.length
  while (a < b && lines[a]!.trim() === '') a++
  while (b > a && lines[b - 1]!.trim() === '') b--
  return lines.slice(a, b)
}

/**
 * Writes a role's memory file (pure): title, last-modified time and entry
 * count, a section per type in a fixed order (entries in the order given),
 * then anything kept unparsed, verbatim, under its own heading.
 */
export function renderMemoryFile(
  role: string,
  entries: readonly MemoryEntry[],
  kept: readonly string[],
  modified: string,
): string {
  const out: string[] = [`# Memory of role ${role}`, '', `Last modified: ${modified} · Entries: ${entries.length}`, '']
  for (const type of MEMORY_TYPES) {
    const ofType = entries.filter((e) => e.type === type)
    if (ofType.length === 0) continue
    out.push(`## ${SECTION_TITLES[type]}`, '')
    for (const e of ofType) {
      // A lone CR ends a line for Markdown (CommonMark) and for many editors: written as a line break, so no line of content after one starts unescaped.
      const content = e.content.split(/\r\n|\r|\n/).map((l) => (NEEDS_ESCAPE.test(l) ? `\\${l}` : l))
      out.push(
        `### [${e.id}]`,
        ...content,
        `<!-- meta: ${JSON.stringify({ type: e.type, tags: e.tags, createdAt: e.createdAt })} -->`,
        '',
      )
    }
  }
  if (kept.length > 0) out.push(`## ${UNPARSED_TITLE}`, '', ...kept.flatMap((k) => [k, '']))
  return `${out.join('\n').trimEnd()}\n`
}
