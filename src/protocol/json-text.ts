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
