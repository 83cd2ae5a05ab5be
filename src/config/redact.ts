/**
 * Replaces every secret (an expanded `env` or `headers` value) in a text with
 * `***`, longest first so a secret that contains another is hidden whole.
 * Values shorter than 3 characters are left: they would mask ordinary text.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of [...secrets].filter((s) => s.length >= 3).sort((a, b) => b.length - a.length)) out = out.split(secret).join('***')
  return out
}
