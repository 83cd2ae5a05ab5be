import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJwtVerifier, protectedResourceMetadata, skillsFromClaim } from '../../src/http/jwt.js'

const issuer = 'https://id.example.com/'
const audience = 'https://myc.example.com/mcp'

describe('http.jwt: tokens from an identity provider', () => {
  let keys: Awaited<ReturnType<typeof generateKeyPair>>
  let other: Awaited<ReturnType<typeof generateKeyPair>>
  let jwks: Server
  let jwksUrl: string
  let fetches = 0
  beforeAll(async () => {
    keys = await generateKeyPair('ES256')
    other = await generateKeyPair('ES256')
    const jwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }
    jwks = createServer((_req, res) => {
      fetches++
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ keys: [jwk] }))
    })
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r))
    jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`
  })
  afterAll(() => new Promise<void>((r) => jwks.close(() => r())))

  const sign = (
    claims: Record<string, unknown>,
    over: {
      key?: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']
      iss?: string
      aud?: string
      exp?: number | string
      nbf?: number
      noExp?: boolean
    } = {},
  ) => {
    let jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(over.iss ?? issuer)
      .setAudience(over.aud ?? audience)
      .setSubject('alice')
      .setIssuedAt()
    if (!over.noExp) jwt = jwt.setExpirationTime(over.exp ?? '5m')
    if (over.nbf !== undefined) jwt = jwt.setNotBefore(over.nbf)
    return jwt.sign(over.key ?? keys.privateKey)
  }

  it('accepts a good token from the JWKS and reads the role and the skill scopes', async () => {
    const v = await createJwtVerifier({ issuer, audience, jwksUrl, roleClaim: 'mycelium.role', skillsClaim: 'scope' })
    const r = await v.verify(await sign({ mycelium: { role: 'dev' }, scope: 'openid skill:reader skill:writer' }))
    expect(r).toEqual({ ok: true, identity: { subject: `${issuer}|alice`, role: 'dev', skills: ['reader', 'writer'] } })
    expect(fetches).toBeGreaterThan(0)
  })

  it('refuses a wrong signature, issuer, audience, an expired or not-yet-valid token, one without exp, and a bad role claim', async () => {
    const v = await createJwtVerifier({ issuer, audience, jwksUrl, roleClaim: 'role' })
    const now = Math.floor(Date.now() / 1000)
    const cases: Array<[string, Promise<string>, RegExp]> = [
      ['other key', sign({ role: 'dev' }, { key: other.privateKey }), /SIGNATURE/],
      ['issuer', sign({ role: 'dev' }, { iss: 'https://evil.example.com/' }), /CLAIM_VALIDATION/],
      ['audience', sign({ role: 'dev' }, { aud: 'https://other.example.com/mcp' }), /CLAIM_VALIDATION/],
      ['expired', sign({ role: 'dev' }, { exp: now - 3600 }), /EXPIRED/],
      ['not yet valid', sign({ role: 'dev' }, { nbf: now + 3600 }), /CLAIM_VALIDATION/],
      ['no exp', sign({ role: 'dev' }, { noExp: true }), /CLAIM_VALIDATION/],
      ['role with a slash', sign({ role: '../dev' }), /not a role name/],
      ['no role', sign({}), /not a role name/],
    ]
    for (const [name, token, reason] of cases) {
      const r = await v.verify(await token)
      expect(r.ok, name).toBe(false)
      if (!r.ok) expect(r.reason, name).toMatch(reason)
    }
    expect((await v.verify('not.a.jwt')).ok).toBe(false)
    expect((await v.verify('')).ok).toBe(false)
  })

  it('a PEM public key works without a JWKS; a bad one is a config error at start', async () => {
    const v = await createJwtVerifier({
      issuer,
      audience,
      publicKey: await exportSPKI(keys.publicKey),
      roleClaim: 'role',
      skillsClaim: 'skills',
    })
    expect(await v.verify(await sign({ role: 'qa', skills: ['reader'] }))).toMatchObject({
      ok: true,
      identity: { role: 'qa', skills: ['reader'] },
    })
    await expect(createJwtVerifier({ issuer, audience, publicKey: 'nope', roleClaim: 'role' })).rejects.toThrow(
      /http\.jwt\.publicKey: not a PEM public key/,
    )
    await expect(createJwtVerifier({ issuer, audience, roleClaim: 'role' })).rejects.toThrow(
      /give jwksUrl .* or publicKey/,
    )
  })

  it('refuses a valid token without a subject (no sub, an empty or non-string one): every such token would be one caller', async () => {
    const v = await createJwtVerifier({
      issuer,
      audience,
      publicKey: await exportSPKI(keys.publicKey),
      roleClaim: 'role',
    })
    const base = () =>
      new SignJWT({ role: 'dev' })
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime('5m')
    for (const token of [
      await base().sign(keys.privateKey),
      await base().setSubject('  ').sign(keys.privateKey),
      await new SignJWT({ role: 'dev', sub: 42 } as unknown as { role: string })
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setExpirationTime('5m')
        .sign(keys.privateKey),
    ]) {
      expect(await v.verify(token)).toEqual({
        ok: false,
        reason: 'no sub claim',
        description: 'the token has no sub claim (myc binds a caller to iss and sub)',
      })
    }
    expect(await v.verify(await base().setSubject('bob').sign(keys.privateKey))).toEqual({
      ok: true,
      identity: { subject: `${issuer}|bob`, role: 'dev', skills: [] },
    })
  })

  it('skills from a claim: lists, scope strings, skill: prefixes', () => {
    expect(skillsFromClaim(['a', 'b', 'a'])).toEqual(['a', 'b'])
    expect(skillsFromClaim('openid skill:a profile skill:b')).toEqual(['a', 'b'])
    expect(skillsFromClaim('a b')).toEqual(['a', 'b'])
    expect(skillsFromClaim(42)).toEqual([])
  })

  it('RFC 9728 metadata names the resource and the issuer', () => {
    expect(protectedResourceMetadata({ issuer, audience, roleClaim: 'role' }, ['skill:reader'])).toMatchObject({
      resource: audience,
      authorization_servers: [issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: ['skill:reader'],
    })
  })
})
