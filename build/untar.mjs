// Extracts one file from a .tgz without an external `tar`: Windows runners may
// find GNU tar first on PATH, which reads `C:\…` as a remote host.
import { closeSync, createReadStream, openSync, renameSync, rmSync, writeSync } from 'node:fs'
import { createGunzip } from 'node:zlib'

const BLOCK = 512

function text(buf, start, length) {
  const end = buf.indexOf(0, start)
  return buf.toString('utf8', start, end === -1 || end > start + length ? start + length : end)
}

function entrySize(header) {
  // Base-256 (high bit set) for sizes over 8 GiB; octal otherwise.
  if (header[124] & 0x80) return Number(header.readBigUInt64BE(128))
  return Number.parseInt(text(header, 124, 12).trim() || '0', 8)
}

/** `path` records of a pax extended header, which override the next entry's name. */
function paxPath(data) {
  let at = 0
  while (at < data.length) {
    const space = data.indexOf(0x20, at)
    if (space === -1) break
    const length = Number.parseInt(data.toString('utf8', at, space), 10)
    if (!(length > 0)) break
    const record = data.toString('utf8', space + 1, at + length - 1)
    if (record.startsWith('path=')) return record.slice(5)
    at += length
  }
  return undefined
}

/**
 * Writes the member `member` (e.g. `package/bin/node`) of the gzipped tar
 * `tarball` to `dest`, streaming (base binaries are ~180 MB unpacked).
 * Understands ustar prefixes, pax `path` and GNU long names. Throws when the
 * archive is truncated or has no such member; `dest` is then left absent.
 */
export async function extractMember(tarball, member, dest) {
  const chunks = createReadStream(tarball).pipe(createGunzip())[Symbol.asyncIterator]()
  let pending = Buffer.alloc(0)
  const more = async () => {
    const { value, done } = await chunks.next()
    if (done) return false
    pending = pending.length ? Buffer.concat([pending, value]) : value
    return true
  }
  const read = async (n) => {
    while (pending.length < n) if (!(await more())) throw new Error(`${tarball}: truncated archive`)
    const out = pending.subarray(0, n)
    pending = pending.subarray(n)
    return out
  }
  const pass = async (n, sink) => {
    while (n > 0) {
      if (pending.length === 0 && !(await more())) throw new Error(`${tarball}: truncated archive`)
      const take = Math.min(n, pending.length)
      sink?.(pending.subarray(0, take))
      pending = pending.subarray(take)
      n -= take
    }
  }
  const padding = (size) => (BLOCK - (size % BLOCK)) % BLOCK

  let nextName
  for (;;) {
    if (pending.length < BLOCK && !(await more()) && pending.length < BLOCK) break
    const header = await read(BLOCK)
    if (header.every((b) => b === 0)) break
    const size = entrySize(header)
    const type = String.fromCharCode(header[156] || 0x30)
    if (type === 'x' || type === 'L') {
      const data = Buffer.from(await read(size))
      await pass(padding(size))
      nextName = type === 'x' ? (paxPath(data) ?? nextName) : text(data, 0, data.length)
      continue
    }
    const prefix = header.toString('latin1', 257, 262) === 'ustar' ? text(header, 345, 155) : ''
    const name = nextName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100))
    nextName = undefined
    if (name === member && (type === '0' || type === '\0')) {
      // A name of its own: two processes fetching the same binary at once (test files in parallel) must not share one.
      const partial = `${dest}.${process.pid}.${Math.random().toString(36).slice(2)}.partial`
      const fd = openSync(partial, 'w')
      try {
        await pass(size, (chunk) => writeSync(fd, chunk))
      } catch (error) {
        closeSync(fd)
        rmSync(partial, { force: true })
        throw error
      }
      closeSync(fd)
      renameSync(partial, dest)
      await chunks.return?.()
      return
    }
    await pass(size + padding(size))
  }
  throw new Error(`${tarball}: no member "${member}"`)
}
