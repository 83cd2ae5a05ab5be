/**
 * Scripts written without spaces between words: a trigger in them matches inside a longer run of text.
 * The prolonged sound mark is written as an escape (U+30FC): the bundle must stay ASCII, or its whole
 * source is held as a two-byte string (tests/build/bundle-contents.test.ts).
 */
const UNSPACED =
  /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u30FC]+$/u

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Whether `trigger` occurs in `text`: case-insensitive, as a whole word (or anywhere, for scripts without spaces). */
export function triggerMatches(text: string, trigger: string): boolean {
  const t = trigger.trim()
  if (t === '') return false
  if (UNSPACED.test(t)) return text.toLocaleLowerCase().includes(t.toLocaleLowerCase())
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escape(t)}(?![\\p{L}\\p{N}_])`, 'iu').test(text)
}

/** The inactive skills whose triggers the text names, in the order given. */
export function triggeredSkills(
  text: string,
  skills: ReadonlyArray<{ name: string; triggers: readonly string[]; active: boolean }>,
): string[] {
  return skills.filter((s) => !s.active && s.triggers.some((t) => triggerMatches(text, t))).map((s) => s.name)
}
