import { describe, expect, it } from 'vitest'
import { MycError } from '../../src/errors.js'
import { bearerOf, matchToken, readTokens } from '../../src/http/bearer-tokens.js'

const env = { TOKEN_A: 'a-long-random-token-for-alice', TOKEN_B: 'b-long-random-token-for-bob', EMPTY: '  ' }

describe('readTokens: the values come from the environment at start', () => {
  it('reads each token, labelled by its name or its index, with its role and skills', () => {
    const tokens = readTokens(
      [
        { env: 'TOKEN_A', role: 'guest', name: 'alice' },
        { env: 'TOKEN_B', role: 'developer', skills: ['reader'] },
      ],
      env,
    )
    expect(tokens.map(({ index, label, role, skills }) => ({ index, label, role, skills }))).toEqual([
      { index: 0, label: 'alice', role: 'guest', skills: [] },
      { index: 1, label: 'tokens[1]', role: 'developer', skills: ['reader'] },
    ])
    // The value itself is not kept anywhere on the token.
    expect(JSON.stringify(tokens)).not.toContain('a-long-random-token')
  })

  it('an unset or empty variable is a config error naming the entry and the variable, and never a value', () => {
    let error: unknown
    try {
      readTokens(
        [
          { env: 'TOKEN_A', role: 'guest' },
          { env: 'MISSING', role: 'guest' },
          { env: 'EMPTY', role: 'guest' },
        ],
        env,
        '/x/mycelium.config.json',
      )
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(MycError)
    const e = error as MycError
    expect(e.code).toBe('config_invalid')
    expect(e.exitCode).toBe(2)
    expect(e.message).toMatch(/\/x\/mycelium\.config\.json/)
    expect(e.message).toMatch(/http\.tokens\[1\]\.env: environment variable MISSING is not set/)
    expect(e.message).toMatch(/http\.tokens\[2\]\.env: environment variable EMPTY is empty/)
    expect(e.message).not.toContain('a-long-random-token')
  })

  it('two entries holding the same token are refused', () => {
    expect(() =>
      readTokens(
        [
          { env: 'TOKEN_A', role: 'guest' },
          { env: 'SAME', role: 'admin' },
        ],
        { ...env, SAME: env.TOKEN_A },
      ),
    ).toThrow(/http\.tokens\[1\]\.env: SAME holds the same token as http\.tokens\[0\]/)
  })
})

describe('matchToken', () => {
  const tokens = readTokens(
    [
      { env: 'TOKEN_A', role: 'guest', name: 'alice' },
      { env: 'TOKEN_B', role: 'developer', name: 'bob' },
    ],
    env,
  )

  it('finds the token a Bearer header carries (scheme in any case)', () => {
    expect(matchToken(tokens, `Bearer ${env.TOKEN_B}`)).toMatchObject({ ok: true, token: { label: 'bob' } })
    expect(matchToken(tokens, `bearer ${env.TOKEN_A}`)).toMatchObject({ ok: true, token: { label: 'alice' } })
  })

  it('tells a missing credential from a wrong one', () => {
    expect(matchToken(tokens, undefined)).toEqual({ ok: false, reason: 'missing' })
    expect(matchToken(tokens, '')).toEqual({ ok: false, reason: 'missing' })
    expect(matchToken(tokens, 'Bearer nope')).toEqual({ ok: false, reason: 'invalid' })
    expect(matchToken(tokens, `Basic ${Buffer.from(`x:${env.TOKEN_A}`).toString('base64')}`)).toEqual({
      ok: false,
      reason: 'invalid',
    })
    // A prefix or an extension of a real token is not that token.
    expect(matchToken(tokens, `Bearer ${env.TOKEN_A.slice(0, -1)}`)).toEqual({ ok: false, reason: 'invalid' })
    expect(matchToken(tokens, `Bearer ${env.TOKEN_A}x`)).toEqual({ ok: false, reason: 'invalid' })
  })

  it('bearerOf reads only the Bearer scheme with one token', () => {
    expect(bearerOf('Bearer abc')).toBe('abc')
    expect(bearerOf('Bearer abc def')).toBeUndefined()
    expect(bearerOf('Token abc')).toBeUndefined()
  })
})
