/**
 * Replaces every secret (an expanded `env` or `headers` value) in a text with
 * `***`, longest first so a secret that contains another is hidden whole.
 * Values shorter than 3 characters are left: they would mask ordinary text.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of [...secrets].filter((s) => s.length >= 3).sort((a, b) => b.length - a.length))
    out = out.split(secret).join('***')
  return out
}

/**
 * A URL without its secrets, for messages, logs and `--json` reports: the
 * user name and password become `***`, so does every query value (names
 * kept) and the fragment. Not a URL: `the configured URL`.
 */
export function redactUrl(url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return 'the configured URL'
  }
  if (u.username) u.username = '***'
  if (u.password) u.password = '***'
  if (u.search) u.search = [...u.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=***`).join('&')
  if (u.hash) u.hash = '***'
  return u.href.replaceAll('%2A%2A%2A', '***')
}

/** What looks like a URL inside a text: a scheme, `://`, then up to a space, a quote or an angle bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi

/**
 * `text` with every URL in it passed through {@link redactUrl} (one that
 * does not parse is left): for errors that quote the URL they failed on.
 * A URL without secrets is unchanged.
 */
export function redactUrls(text: string): string {
  return text.replace(URL_IN_TEXT, (found) => {
    // Punctuation that ends a sentence is not part of the URL.
    const tail = /[.,;:!?)\]]+$/.exec(found)?.[0] ?? ''
    const url = found.slice(0, found.length - tail.length)
    if (!/[@?#]/.test(url)) return found
    try {
      new URL(url)
    } catch {
      return found
    }
    return `${redactUrl(url)}${tail}`
  })
}
