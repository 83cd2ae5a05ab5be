import { describe, expect, it } from 'vitest'
import { redactUrl, redactUrls } from '../src/redact.js'

describe('redactUrl', () => {
  it.each([
    ['http://user:pass@127.0.0.1:1/mcp?token=abc', 'http://***:***@127.0.0.1:1/mcp?token=***'],
    ['http://u:p@127.0.0.1:1/?key=s', 'http://***:***@127.0.0.1:1/?key=***'],
    ['https://token@example.com/mcp', 'https://***@example.com/mcp'],
    ['redis://:secret@redis:6379/0', 'redis://:***@redis:6379/0'],
    ['https://example.com/mcp?a=1&b=2#frag', 'https://example.com/mcp?a=***&b=***#***'],
    ['https://example.com/mcp', 'https://example.com/mcp'],
    ['not a url', 'the configured URL'],
  ])('%s → %s', (url, shown) => {
    expect(redactUrl(url)).toBe(shown)
  })
})

describe('redactUrls: every URL inside a text', () => {
  it('hides user, password and query values, keeps the rest of the text and URLs without secrets', () => {
    const text =
      'Request cannot be constructed from a URL that includes credentials: http://user:pass@127.0.0.1:1/mcp?token=abc. See https://example.com/docs (or "https://x.test/?k=v").'
    expect(redactUrls(text)).toBe(
      'Request cannot be constructed from a URL that includes credentials: http://***:***@127.0.0.1:1/mcp?token=***. See https://example.com/docs (or "https://x.test/?k=***").',
    )
  })
})
