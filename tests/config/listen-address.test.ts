import { describe, expect, it } from 'vitest'
import { formatListen, isLoopbackHost, isWildcardHost, parseListen } from '../../src/config/listen-address.js'

describe('parseListen: [HOST:]PORT', () => {
  it.each([
    ['8808', '127.0.0.1', 8808],
    ['127.0.0.1:8808', '127.0.0.1', 8808],
    ['0.0.0.0:80', '0.0.0.0', 80],
    ['localhost:9000', 'localhost', 9000],
    ['myc.example.com:443', 'myc.example.com', 443],
    ['[::1]:8808', '::1', 8808],
    ['[::]:8808', '::', 8808],
    [' 127.0.0.1:0 ', '127.0.0.1', 0],
  ])('%s → %s port %i', (text, host, port) => {
    expect(parseListen(text)).toEqual({ ok: true, address: { host, port } })
  })

  it.each([
    ['', /has no port/],
    ['127.0.0.1', /has no port/],
    [':8808', /has no host/],
    ['::1:8808', /IPv6 address without brackets/],
    ['[::1]', /bracketed IPv6 address with a port/],
    ['[localhost]:80', /not an IPv6 address/],
    ['127.0.0.1:http', /port that is not a number/],
    ['127.0.0.1:70000', /above 65535/],
    ['ex ample:80', /neither an address nor a host name/],
  ])('refuses %j', (text, why) => {
    const parsed = parseListen(text)
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) {
      expect(parsed.error).toMatch(why)
      expect(parsed.error).toMatch(/use \[HOST:\]PORT/)
    }
  })
})

describe('loopback and wildcard hosts', () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '::ffff:127.0.0.1'])('%s is loopback', (host) =>
    expect(isLoopbackHost(host)).toBe(true),
  )
  it.each(['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'myc.example.com', '128.0.0.1', '::2'])(
    '%s is not loopback',
    (host) => expect(isLoopbackHost(host)).toBe(false),
  )
  it('0.0.0.0 and :: bind every interface', () => {
    expect(isWildcardHost('0.0.0.0')).toBe(true)
    expect(isWildcardHost('::')).toBe(true)
    expect(isWildcardHost('127.0.0.1')).toBe(false)
  })
  it('formats IPv6 in brackets', () => {
    expect(formatListen({ host: '::1', port: 1 })).toBe('[::1]:1')
    expect(formatListen({ host: '127.0.0.1', port: 8808 })).toBe('127.0.0.1:8808')
  })
})
