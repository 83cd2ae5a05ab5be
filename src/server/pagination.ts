import { ProtocolError } from '@modelcontextprotocol/server'
import { markReusable } from '../protocol/result-lines.js'
import { RpcCode } from '../protocol/facts.js'

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
  } catch {
    // A cursor that is not our base64url JSON: refused below, as one that names another list.
  }
  throw new ProtocolError(RpcCode.invalidParams, `Invalid cursor for ${kind}: start again without a cursor`)
}

/** One page of a list, with the cursor of the next page when there is more. */
export function paginate<T>(
  items: readonly T[],
  offset: number,
  pageSize: number,
  kind: string,
): { items: T[]; nextCursor?: string } {
  const end = offset + pageSize
  const page = items.slice(offset, end)
  if (end >= items.length) return { items: page }
  return {
    items: page,
    nextCursor: Buffer.from(JSON.stringify({ k: kind, o: end } satisfies CursorData)).toString('base64url'),
  }
}

/** One page of a list as its answer: the items under `key` (`tools`, `prompts`…), and the next page's cursor when there is more. */
export function listAnswer(
  items: readonly unknown[],
  cursor: unknown,
  pageSize: number,
  kind: string,
  key: string,
): Record<string, unknown> {
  const page = paginate(items, decodeCursor(cursor, kind), pageSize, kind)
  return { [key]: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }
}

/**
 * The pages of one list as last served, kept while the list is made from the
 * same things (`sources`, compared one by one: the cached arrays and
 * revisions the list is computed from). A page asked for again, unchanged,
 * is the same object, marked reusable, so that over stdio it is serialized
 * only once (result-lines.ts). A client paging through a list keeps at most
 * `MAX_PAGES` pages.
 */
export class ListPages {
  private static readonly MAX_PAGES = 64
  private sources: readonly unknown[] = []
  private readonly pages = new Map<number, Record<string, unknown>>()

  page(sources: readonly unknown[], offset: number, build: () => Record<string, unknown>): Record<string, unknown> {
    if (sources.length !== this.sources.length || sources.some((s, i) => s !== this.sources[i])) {
      this.sources = sources
      this.pages.clear()
    }
    let page = this.pages.get(offset)
    if (!page) {
      page = build()
      markReusable(page)
      if (this.pages.size < ListPages.MAX_PAGES) this.pages.set(offset, page)
    }
    return page
  }
}
