import { describe, expect, it } from 'vitest'
import { MycError } from '../../src/errors.js'
import { httpSettings } from '../../src/http/http-settings.js'
import { loadedConfig } from '../helpers/runtime.js'
import { perPersonEntry } from '../helpers/scoped.js'

const ENV = { A: 'alice-settings-0123456789abcdef0123456789', U: 'unnamed-settings-0123456789abcdef01234567' }
const SECRET = { MYC_SESSION_SECRET: 'a-session-secret-0123456789abcdef0123456789' }

function refusal(raw: Record<string, unknown>, env: Record<string, string>): string {
  try {
    httpSettings(loadedConfig(raw), undefined, env)
  } catch (error) {
    expect(error).toBeInstanceOf(MycError)
    expect((error as MycError).code).toBe('config_invalid')
    return (error as Error).message
  }
  throw new Error('expected the settings to be refused')
}

/** What `myc serve --http` checks at start for scoped servers (docs/team.md), before any child starts. */
describe('myc serve --http with a scoped server', () => {
  it('refuses a token that names no person, naming the entry and the servers', () => {
    const message = refusal(
      {
        mcpServers: { gh: perPersonEntry(), plain: { command: 'x' } },
        http: {
          tokens: [
            { env: 'A', role: 'dev', name: 'alice' },
            { env: 'U', role: 'dev' },
          ],
        },
      },
      ENV,
    )
    expect(message).toMatch(
      /http\.tokens\[1\]: names no person, and "gh" runs one process per person \(scope\): give it a "name"/,
    )
    expect(message).not.toMatch(/http\.tokens\[0\]/)
  })

  it('refuses people’s secrets kept in Redis without MYC_TOKEN_KEY, and takes them with it', () => {
    const raw = {
      mcpServers: { gh: perPersonEntry() },
      http: { tokens: [{ env: 'A', role: 'dev', name: 'alice' }], sessionStore: 'redis://127.0.0.1:1' },
    }
    expect(refusal(raw, { ...ENV, ...SECRET })).toMatch(
      /people's own secrets .* sealed with MYC_TOKEN_KEY; set MYC_TOKEN_KEY/,
    )
    expect(
      httpSettings(loadedConfig(raw), undefined, {
        ...ENV,
        ...SECRET,
        MYC_TOKEN_KEY: Buffer.alloc(32).toString('base64'),
      }).tokenKey,
    ).toBeDefined()
  })

  it('takes unnamed tokens when no server is scoped', () => {
    const raw = { mcpServers: { plain: { command: 'x' } }, http: { tokens: [{ env: 'U', role: 'dev' }] } }
    expect(httpSettings(loadedConfig(raw), undefined, ENV).tokens).toHaveLength(1)
  })
})
