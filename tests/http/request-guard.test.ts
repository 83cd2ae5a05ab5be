import { describe, expect, it } from 'vitest'
import {
  allowedHostnames,
  checkHost,
  checkOrigin,
  corsHeaders,
  normalizeOrigin,
  preflightHeaders,
} from '../../src/http/request-guard.js'

describe('Host header (DNS rebinding)', () => {
  it('a loopback bind answers to the loopback names and its own host, port-agnostic', () => {
    const allowed = allowedHostnames({ host: '127.0.0.1', port: 8808 }, [])
    expect(checkHost('127.0.0.1:8808', allowed)).toEqual({ ok: true })
    expect(checkHost('localhost:1234', allowed)).toEqual({ ok: true })
    expect(checkHost('[::1]:8808', allowed)).toEqual({ ok: true })
    const evil = checkHost('attacker.example:8808', allowed)
    expect(evil.ok).toBe(false)
    if (!evil.ok) expect(evil.message).toMatch(/attacker\.example.*http\.allowedHosts/)
    expect(checkHost(undefined, allowed).ok).toBe(false)
  })

  it('a specific address adds itself; http.allowedHosts adds names (case-insensitive)', () => {
    const allowed = allowedHostnames({ host: '192.168.1.10', port: 8808 }, ['Myc.Example.com'])
    expect(checkHost('192.168.1.10:8808', allowed)).toEqual({ ok: true })
    expect(checkHost('myc.example.com', allowed)).toEqual({ ok: true })
    expect(checkHost('other.example.com', allowed).ok).toBe(false)
    expect(checkHost('[::1]:1', allowedHostnames({ host: '::1', port: 1 }, []))).toEqual({ ok: true })
  })

  it('a wildcard bind checks nothing unless http.allowedHosts lists names', () => {
    expect(allowedHostnames({ host: '0.0.0.0', port: 8808 }, [])).toBeUndefined()
    expect(checkHost('anything.example', undefined)).toEqual({ ok: true })
    const allowed = allowedHostnames({ host: '0.0.0.0', port: 8808 }, ['myc.example.com'])
    expect(checkHost('myc.example.com:8808', allowed)).toEqual({ ok: true })
    expect(checkHost('10.1.2.3:8808', allowed).ok).toBe(false)
  })
})

describe('Origin header', () => {
  const allowed = new Set(['https://app.example.com', 'http://localhost:5173'])

  it('a request without Origin (not a browser) passes, without CORS', () => {
    expect(checkOrigin(null, allowed)).toEqual({ ok: true })
    expect(checkOrigin('', allowed)).toEqual({ ok: true })
  })

  it('the same origin as the Host myc answers as passes without CORS; another port or host does not', () => {
    expect(checkOrigin('http://127.0.0.1:8808', allowed, '127.0.0.1:8808')).toEqual({ ok: true })
    expect(checkOrigin('http://LOCALHOST:8808', allowed, 'localhost:8808')).toEqual({ ok: true })
    expect(checkOrigin('http://127.0.0.1:9999', allowed, '127.0.0.1:8808').ok).toBe(false)
    expect(checkOrigin('http://evil.example:8808', allowed, '127.0.0.1:8808').ok).toBe(false)
    expect(checkOrigin('null', allowed, 'null').ok).toBe(false)
  })

  it("the same origin means the same scheme too: https:// at myc's host:port is not myc on http://", () => {
    expect(checkOrigin('https://127.0.0.1:8808', allowed, '127.0.0.1:8808').ok).toBe(false)
    expect(checkOrigin('https://127.0.0.1:8808', allowed, '127.0.0.1:8808', 'http:').ok).toBe(false)
    expect(checkOrigin('https://127.0.0.1:8808', allowed, '127.0.0.1:8808', 'https:')).toEqual({ ok: true })
    expect(checkOrigin('http://127.0.0.1:8808', allowed, '127.0.0.1:8808', 'https:').ok).toBe(false)
    // Default ports: https://h is h:443 on https, never h:443 on http.
    expect(checkOrigin('https://myc.example.com', allowed, 'myc.example.com:443', 'https:')).toEqual({ ok: true })
    expect(checkOrigin('https://myc.example.com', allowed, 'myc.example.com:443', 'http:').ok).toBe(false)
    expect(checkOrigin('http://myc.example.com', allowed, 'myc.example.com:80', 'http:')).toEqual({ ok: true })
    expect(checkOrigin('http://myc.example.com', allowed, 'myc.example.com', 'ws:').ok).toBe(false)
  })

  it('a listed origin passes and is the one CORS names', () => {
    expect(checkOrigin('https://app.example.com', allowed)).toEqual({ ok: true, origin: 'https://app.example.com' })
    expect(checkOrigin('https://app.example.com:443', allowed)).toEqual({ ok: true, origin: 'https://app.example.com' })
    expect(checkOrigin('http://localhost:5173', allowed)).toEqual({ ok: true, origin: 'http://localhost:5173' })
  })

  it.each([
    'https://evil.example',
    'http://app.example.com',
    'https://app.example.com:8443',
    'http://localhost:3000',
    'null',
    'not a url',
    'file:///etc/passwd',
  ])('%s is refused', (origin) => {
    const verdict = checkOrigin(origin, allowed)
    expect(verdict.ok).toBe(false)
    if (!verdict.ok) expect(verdict.message).toMatch(/is not allowed \(list it in http\.allowedOrigins\)/)
  })

  it('with no origins listed (the default), any Origin is refused', () => {
    expect(checkOrigin('http://localhost:8808', new Set()).ok).toBe(false)
  })

  it('normalizeOrigin keeps scheme, host and a non-default port only', () => {
    expect(normalizeOrigin('HTTPS://App.Example.com:443')).toBe('https://app.example.com')
    expect(normalizeOrigin('https://app.example.com/path')).toBeUndefined()
    expect(normalizeOrigin('ftp://app.example.com')).toBeUndefined()
  })

  it('CORS headers name only the allowed origin', () => {
    expect(corsHeaders('https://app.example.com')).toMatchObject({
      'Access-Control-Allow-Origin': 'https://app.example.com',
      Vary: 'Origin',
      'Access-Control-Expose-Headers': expect.stringMatching(/Mcp-Session-Id/),
    })
    expect(preflightHeaders('https://app.example.com')['Access-Control-Allow-Headers']).toMatch(
      /Authorization.*Mcp-Session-Id.*MCP-Protocol-Version/,
    )
  })
})
