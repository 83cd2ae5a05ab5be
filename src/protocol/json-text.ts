/** Where the JSON string whose text starts at `from` closes: a quote after an even run of backslashes (or the end of the text). */
export function closingQuote(text: string, from: number): number {
  let at = from
  for (;;) {
    const quote = text.indexOf('"', at)
    if (quote < 0) return text.length
    let slashes = 0
    while (quote - slashes - 1 >= from && text.charCodeAt(quote - slashes - 1) === 92 /* \\ */) slashes++
    if (slashes % 2 === 0) return quote
    at = quote + 1
  }
}

/**
 * About how many characters `value`'s JSON text has, found without writing
 * it (a walk of the value; a string counts its length, not its escapes):
 * a cost of memory in the unit of the text, counted once the walk passes
 * `stopAbove` only that far (the answer is then above it, not exact).
 */
export function jsonChars(value: unknown, stopAbove = Infinity): number {
  let chars = 0
  const pending: unknown[] = [value]
  while (pending.length > 0 && chars <= stopAbove) {
    const next = pending.pop()
    if (typeof next === 'string') chars += next.length + 2
    else if (typeof next !== 'object' || next === null) chars += String(next).length
    else if (Array.isArray(next)) {
      chars += next.length + 1
      for (const item of next) pending.push(item)
    } else {
      chars += 2
      for (const key in next) {
        chars += key.length + 4
        pending.push((next as Record<string, unknown>)[key])
      }
    }
  }
  return chars
}
