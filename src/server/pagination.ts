import { ProtocolError } from '@modelcontextprotocol/server'

/** An opaque cursor: which list it belongs to and where the next page starts. */
interface CursorData {
  k: string
  o: number
}

/** Decodes a cursor myc gave out; a foreign or broken one is an invalid-params error. */
export function decodeCursor(cursor: unknown, kind: string): number {
  if (cursor === undefined) return 0
  try {
    const data = JSON.parse(Buffer.from(String(cursor), 'base64url').toString('utf8')) as CursorData
    if (data.k === kind && Number.isInteger(data.o) && data.o >= 0) return data.o
  } catch {}
  throw new ProtocolError(-32602, `Invalid cursor for ${kind}: start again without a cursor`)
}

/** One page of a list, with the cursor of the next page when there is more. */
export function paginate<T>(items: readonly T[], offset: number, pageSize: number, kind: string): { items: T[]; nextCursor?: string } {
  const end = offset + pageSize
  const page = items.slice(offset, end)
  if (end >= items.length) return { items: page }
  return { items: page, nextCursor: Buffer.from(JSON.stringify({ k: kind, o: end } satisfies CursorData)).toString('base64url') }
}
