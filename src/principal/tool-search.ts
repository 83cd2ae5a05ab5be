/**
 * `search_tools` (docs/tokens.md): BM25 over the tools a principal could
 * reach, so that a model finds the skill it needs in one call instead of
 * reading every skill. Pure: documents in, ranked documents out; no network,
 * no model. The caller decides what may be searched (only what the role
 * reaches), so nothing hidden can ever rank.
 */

/** One searchable tool: its wire name, its description, and the skills (the role reaches) that bring it in. */
export interface ToolDoc {
  name: string
  description: string
  /** Reachable skills whose activation shows the tool. */
  skills: readonly string[]
  /** Whether the tool is visible now. */
  active: boolean
  /** Extra words that describe when it is used (its skills' descriptions and triggers): weighed less than the tool's own. */
  context?: string
}

export interface ToolHit extends ToolDoc {
  score: number
}

const STOP = new Set(
  'a an and are as at be by can do does for from how i in into is it its me my of on or so that the this to use want with you your'.split(
    ' ',
  ),
)

/** A word's crude stem: plural, -ing, -ed and a final e go, so "reads", "reading" and "read" meet. */
function stem(word: string): string {
  let w = word
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`
  else if (w.length > 4 && /(?:ch|sh|x|ss)es$/.test(w)) w = w.slice(0, -2)
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1)
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3)
  else if (w.length > 4 && w.endsWith('ed')) w = w.slice(0, -2)
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1)
  return w
}

/** Words of a name or text: camelCase, snake_case, kebab-case and punctuation split, lower case, stop words out, stemmed. */
export function searchTerms(text: string): string[] {
  return text
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0 && !STOP.has(w))
    .map(stem)
}

const K1 = 1.2
const B = 0.75
/** How much more a word of the tool's name counts than one of its description; the skills' context counts least. */
const NAME_WEIGHT = 3
const CONTEXT_WEIGHT = 0.5

/**
 * The `limit` best matches of `query` among `docs`, best first (ties keep
 * the order of `docs`); documents that share no word with the query are left
 * out. BM25 (k1 1.2, b 0.75) over a weighted bag of words: the name, the
 * description, and the skills' context.
 */
export function rankTools(docs: readonly ToolDoc[], query: string, limit: number): ToolHit[] {
  const wanted = [...new Set(searchTerms(query))]
  if (wanted.length === 0 || docs.length === 0) return []
  const bags = docs.map((d) => {
    const bag = new Map<string, number>()
    const add = (text: string, weight: number) => {
      for (const t of searchTerms(text)) bag.set(t, (bag.get(t) ?? 0) + weight)
    }
    add(d.name, NAME_WEIGHT)
    add(d.description, 1)
    if (d.context) add(d.context, CONTEXT_WEIGHT)
    let length = 0
    for (const n of bag.values()) length += n
    return { bag, length }
  })
  const average = bags.reduce((sum, b) => sum + b.length, 0) / bags.length || 1
  const idf = new Map<string, number>()
  for (const term of wanted) {
    const containing = bags.filter((b) => b.bag.has(term)).length
    idf.set(term, Math.log(1 + (docs.length - containing + 0.5) / (containing + 0.5)))
  }
  const hits: ToolHit[] = []
  docs.forEach((doc, i) => {
    const { bag, length } = bags[i]!
    let score = 0
    for (const term of wanted) {
      const tf = bag.get(term)
      if (tf) score += idf.get(term)! * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / average)))
    }
    if (score > 0) hits.push({ ...doc, score })
  })
  return hits
    .map((h, i) => ({ h, i }))
    .sort((a, b) => b.h.score - a.h.score || a.i - b.i)
    .slice(0, Math.max(0, limit))
    .map(({ h }) => h)
}

/** A description's first line, cut to `max` characters. */
export function oneLine(description: string, max = 120): string {
  const line = (description.split('\n').find((l) => l.trim() !== '') ?? '').trim()
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line
}
