/** Damerau–Levenshtein (optimal string alignment) distance, case-insensitive. */
function editDistance(a: string, b: string): number {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) => [i, ...Array<number>(t.length).fill(0)])
  for (let j = 1; j <= t.length; j++) d[0]![j] = j
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[s.length]![t.length]!
}

/** The candidate at the least edit distance from `input` (the first of equals) and that distance; none for no candidates. */
export function closest(input: string, candidates: readonly string[]): { best: string | undefined; distance: number } {
  let best: string | undefined
  let distance = Number.POSITIVE_INFINITY
  for (const candidate of candidates) {
    const d = editDistance(input, candidate)
    if (d < distance) {
      best = candidate
      distance = d
    }
  }
  return { best, distance }
}

/** The closest candidate to `input`, when it is close enough to be a likely typo. */
export function didYouMean(input: string, candidates: readonly string[]): string | undefined {
  const { best, distance: bestDistance } = closest(input, candidates)
  const limit = Math.max(1, Math.floor(input.length / 3))
  if (best !== undefined && (bestDistance <= limit || best.toLowerCase() === input.toLowerCase())) return best
  // A key with a different case or a dash for camelCase (`allowed-roles`).
  const folded = input.replace(/[-_]/g, '').toLowerCase()
  const sameLetters = candidates.find((c) => c.replace(/[-_]/g, '').toLowerCase() === folded)
  if (sameLetters) return sameLetters
  // A singular for a plural and the like (`maxRetry` for `maxRetries`).
  const stem = folded.slice(0, -1)
  return stem.length >= 4 ? candidates.find((c) => c.toLowerCase().startsWith(stem)) : undefined
}
