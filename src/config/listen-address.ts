import { isIP } from 'node:net'

/** Where `myc serve --http` listens. `host` is as node:net takes it (IPv6 without brackets). */
export interface ListenAddress {
  host: string
  port: number
}

export type ListenParse = { ok: true; address: ListenAddress } | { ok: false; error: string }

/** The host used when only a port is given: loopback, the one place where no credentials are allowed. */
const DEFAULT_LISTEN_HOST = '127.0.0.1'

const USAGE = 'use [HOST:]PORT, such as 8808, 127.0.0.1:8808, 0.0.0.0:8808 or [::1]:8808'

/**
 * Parses `[HOST:]PORT`: a bare port means 127.0.0.1; an IPv6 host is
 * bracketed (`[::1]:8808`). Port 0 asks the system for a free port.
 */
export function parseListen(text: string): ListenParse {
  const value = text.trim()
  const fail = (why: string): ListenParse => ({ ok: false, error: `"${text}" ${why}; ${USAGE}` })
  let host: string
  let portText: string
  if (/^\d+$/.test(value)) {
    host = DEFAULT_LISTEN_HOST
    portText = value
  } else if (value.startsWith('[')) {
    const m = /^\[([^\]]+)\]:(\d+)$/.exec(value)
    if (!m) return fail('is not a bracketed IPv6 address with a port')
    host = m[1]!
    portText = m[2]!
    if (isIP(host) !== 6) return fail(`has "${host}" in brackets, which is not an IPv6 address`)
  } else {
    const colon = value.lastIndexOf(':')
    if (colon === -1) return fail('has no port')
    host = value.slice(0, colon)
    portText = value.slice(colon + 1)
    if (host.includes(':')) return fail('looks like an IPv6 address without brackets')
    if (host === '') return fail('has no host before ":"')
    if (!/^[A-Za-z0-9.-]+$/.test(host)) return fail(`has a host "${host}" that is neither an address nor a host name`)
  }
  if (!/^\d+$/.test(portText)) return fail('has a port that is not a number')
  const port = Number(portText)
  if (port > 65_535) return fail('has a port above 65535')
  return { ok: true, address: { host, port } }
}

/** Whether connections to `host` can only come from this machine (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase()
  if (h === 'localhost') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || h.startsWith('::ffff:127.')
  return false
}

/** Whether `host` binds every interface (0.0.0.0, ::). */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '0:0:0:0:0:0:0:0'
}

/** How an address is written in messages and URLs (IPv6 in brackets). */
export function formatListen(address: ListenAddress): string {
  return `${isIP(address.host) === 6 ? `[${address.host}]` : address.host}:${address.port}`
}
