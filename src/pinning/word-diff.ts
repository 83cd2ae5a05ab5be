import { canonicalJson, type PinnedDefinition } from './definitions.js'

/** A run of words both texts share, or that only the old or the new one has. */
export interface DiffPart {
  op: 'same' | 'removed' | 'added'
  text: string
}

/** Past this many cells the middle of two texts is shown as replaced whole, not diffed word by word. */
const MAX_CELLS = 1_000_000

/** Words and the spaces between them, each a token, so the parts put back together give the texts exactly. */
function tokens(text: string): string[] {
  return text.match(/\s+|\S+/g) ?? []
}

/**
 * A word diff of two texts (what a review of a changed description reads):
 * the shared start and end kept, the middle by longest common subsequence
 * of words. Joining the `same` and `removed` parts gives `before`; the
 * `same` and `added` parts, `after`.
 */
export function wordDiff(before: string, after: string): DiffPart[] {
  const a = tokens(before)
  const b = tokens(after)
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let end = 0
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++
  const parts: DiffPart[] = []
  push(parts, 'same', a.slice(0, start))
  const middle = diffMiddle(a.slice(start, a.length - end), b.slice(start, b.length - end))
  for (const part of middle) push(parts, part.op, [part.text])
  push(parts, 'same', a.slice(a.length - end))
  return parts
}

function push(parts: DiffPart[], op: DiffPart['op'], words: readonly string[]): void {
  if (words.length === 0) return
  const text = words.join('')
  const last = parts.at(-1)
  if (last?.op === op) last.text += text
  else parts.push({ op, text })
}

/** The LCS diff of two token lists that share neither their first nor their last token. */
function diffMiddle(a: readonly string[], b: readonly string[]): DiffPart[] {
  const out: DiffPart[] = []
  if (a.length * b.length > MAX_CELLS) {
    push(out, 'removed', a)
    push(out, 'added', b)
    return out
  }
  const width = b.length + 1
  // lcs[i * width + j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = new Uint32Array((a.length + 1) * width)
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i * width + j] =
        a[i] === b[j] ? lcs[(i + 1) * width + j + 1]! + 1 : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!)
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push(out, 'same', [a[i++]!])
      j++
    } else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) push(out, 'removed', [a[i++]!])
    else push(out, 'added', [b[j++]!])
  }
  push(out, 'removed', a.slice(i))
  push(out, 'added', b.slice(j))
  return out
}

/** One pinned field that differs, as a word diff. */
export interface FieldDiff {
  field: string
  parts: DiffPart[]
}

/** A field's value as text: a string as it is, anything else as indented canonical JSON. */
function fieldText(value: unknown): string {
  if (value === undefined) return ''
  return typeof value === 'string' ? value : canonicalJson(value, 2)
}

/**
 * The fields of two pinned definitions that differ (name, title and
 * description first, then the schemas and the rest by name), each as a word
 * diff; with no `before`, every field of `after` as added, and the reverse.
 */
export function definitionDiff(before?: PinnedDefinition, after?: PinnedDefinition): FieldDiff[] {
  const first = ['name', 'title', 'description']
  const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort((x, y) => {
    const rank = (f: string) => (first.includes(f) ? first.indexOf(f) : first.length)
    return rank(x) - rank(y) || (x < y ? -1 : x > y ? 1 : 0)
  })
  const diffs: FieldDiff[] = []
  for (const field of fields) {
    const old = fieldText(before?.[field])
    const now = fieldText(after?.[field])
    if (old !== now) diffs.push({ field, parts: wordDiff(old, now) })
  }
  return diffs
}
