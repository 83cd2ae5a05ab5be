/** Words for people, in one place. */

/** `n` and its noun, in the singular for one: `1 turn`, `2 turns`, `0 turns` (`many`: an irregular plural). */
export function countOf(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`
}
