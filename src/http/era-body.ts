import { isJsonContentType } from '@modelcontextprotocol/server'
import type { ReadBody } from './http-era.js'
import { MAX_NESTING, nestsDeeperThan } from '../protocol/inbound.js'
import type { InboundRequest } from './node-bridge.js'

/**
 * Reads a POST body once, to tell its era: the body parsed when it is JSON
 * within `maxBytes` and the nesting limit, else nothing usable (the route it
 * goes to answers that). The request handed on reads the same text again
 * without touching the stream. Other requests, and a Content-Type other
 * than JSON, are not read here. The value parsed travels with the request
 * handed on (`parsed`), so a 4 MB body is parsed once, not twice; so does
 * what runs once its answer is over (`answered`) and its client's signal.
 */
export async function readForEra(
  inbound: InboundRequest,
  maxBytes: number,
): Promise<{ inbound: InboundRequest; body: ReadBody }> {
  const { request } = inbound
  if (request.method !== 'POST' || !isJsonContentType(request.headers.get('content-type')))
    return { inbound, body: { parsed: false } }
  const read = await inbound.readBody(maxBytes)
  const again: InboundRequest = { request, readBody: () => Promise.resolve(read) }
  if (inbound.answered) again.answered = inbound.answered
  if (inbound.signal) again.signal = inbound.signal
  if (read.tooLarge || nestsDeeperThan(read.text, MAX_NESTING)) return { inbound: again, body: { parsed: false } }
  try {
    const value = JSON.parse(read.text) as unknown
    return { inbound: { ...again, parsed: { value } }, body: { parsed: true, value } }
  } catch {
    return { inbound: again, body: { parsed: false } }
  }
}
