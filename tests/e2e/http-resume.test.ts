import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
import { mcpHeaders, rawInitialize, startHttpMyc, type HttpMyc } from '../helpers/http.js'

/**
 * Streamable HTTP resumability for 2025 sessions (src/http/event-log.ts):
 * every SSE event carries an id; a client that lost a call's stream comes
 * back with GET and `Last-Event-ID` and gets what it missed, the call's
 * result included.
 */

type SseEvent = { id?: string; data: Record<string, unknown> }

/**
 * Reads SSE events from a response body until `enough` says stop; each
 * event's id and JSON data. The body is cancelled then, unless `keepOpen`
 * (its reader is handed to `keepOpen` instead).
 */
async function readEvents(
  response: Response,
  enough: (events: SseEvent[]) => boolean,
  keepOpen?: (reader: ReadableStreamDefaultReader<Uint8Array>) => void,
): Promise<SseEvent[]> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const events: SseEvent[] = []
  let buffer = ''
  try {
    while (!enough(events)) {
      const { value, done } = await reader.read()
      if (done) break
      buffer += decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const id = /^id: ?(.*)$/m.exec(block)?.[1]
        const data = block
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trim())
          .join('\n')
        if (data) events.push({ ...(id ? { id } : {}), data: JSON.parse(data) as Record<string, unknown> })
      }
    }
  } finally {
    if (keepOpen) keepOpen(reader)
    else await reader.cancel().catch(() => {})
  }
  return events
}

describe('myc serve --http: a lost stream resumed with Last-Event-ID (build/myc.cjs)', () => {
  let m: HttpMyc
  beforeAll(async () => {
    m = await startHttpMyc(
      writeConfig({ mcpServers: { slow: { command: process.execPath, args: [fixtureServer('progress')] } } }),
    )
  }, 30_000)
  afterAll(async () => {
    expect(await m?.stop()).toBe(0)
  })

  it('replays the events after the last one the client saw, the call’s result included', async () => {
    const { sessionId, response } = await rawInitialize(m.url)
    expect(response.status).toBe(200)
    const session = { 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-11-25' }
    await fetch(m.url, {
      method: 'POST',
      headers: mcpHeaders(session),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
    const call = await fetch(m.url, {
      method: 'POST',
      headers: mcpHeaders(session),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 42,
        method: 'tools/call',
        params: { name: 'slow__count', arguments: { steps: 5, stepMs: 150 }, _meta: { progressToken: 'p' } },
      }),
    })
    expect(call.headers.get('content-type')).toMatch(/text\/event-stream/)
    // The client sees the first progress report, then loses the stream.
    const seen = await readEvents(call, (events) => events.some((e) => e.data.method === 'notifications/progress'))
    const lastSeen = seen.filter((e) => e.id).at(-1)!
    expect(lastSeen.id).toMatch(/_\d+$/)
    expect(seen.at(-1)!.data).toMatchObject({ method: 'notifications/progress', params: { progress: 1 } })
    const resumed = await fetch(m.url, {
      method: 'GET',
      headers: { ...session, Accept: 'text/event-stream', 'Last-Event-ID': lastSeen.id! },
    })
    expect(resumed.status).toBe(200)
    const rest = await readEvents(resumed, (events) => events.some((e) => e.data.id === 42))
    const progress = rest
      .filter((e) => e.data.method === 'notifications/progress')
      .map((e) => (e.data.params as { progress: number }).progress)
    // What came after the last event seen, nothing before it, and the result last.
    expect(progress).toEqual([2, 3, 4, 5])
    expect(rest.at(-1)!.data).toMatchObject({ id: 42, result: { content: [{ type: 'text', text: 'counted 5' }] } })
    expect(rest.every((e) => e.id !== undefined)).toBe(true)
  })

  it('takes a stream over from a connection the server still holds (the client is back before the drop is noticed)', async () => {
    const { sessionId } = await rawInitialize(m.url)
    const session = { 'mcp-session-id': sessionId!, 'mcp-protocol-version': '2025-11-25' }
    const call = await fetch(m.url, {
      method: 'POST',
      headers: mcpHeaders(session),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'slow__count', arguments: { steps: 4, stepMs: 150 }, _meta: { progressToken: 'q' } },
      }),
    })
    let old: ReadableStreamDefaultReader<Uint8Array> | undefined
    const seen = await readEvents(
      call,
      (events) => events.some((e) => e.data.method === 'notifications/progress'),
      (reader) => (old = reader),
    )
    const lastSeen = seen.filter((e) => e.id).at(-1)!
    // The first connection is still open on both ends: the resume still gets the stream.
    const resumed = await fetch(m.url, {
      method: 'GET',
      headers: { ...session, Accept: 'text/event-stream', 'Last-Event-ID': lastSeen.id! },
    })
    expect(resumed.status).toBe(200)
    const rest = await readEvents(resumed, (events) => events.some((e) => e.data.id === 7))
    expect(
      rest
        .filter((e) => e.data.method === 'notifications/progress')
        .map((e) => (e.data.params as { progress: number }).progress),
    ).toEqual([2, 3, 4])
    expect(rest.at(-1)!.data).toMatchObject({ id: 7, result: { content: [{ type: 'text', text: 'counted 4' }] } })
    // The old connection was closed by the server, and got nothing after the resume.
    let tail = ''
    for (;;) {
      const { value, done } = await old!.read()
      if (done) break
      tail += new TextDecoder().decode(value)
    }
    expect(tail).not.toContain('"id":7')
  })

  it('answers an id it never gave out without replaying anything of another stream', async () => {
    const { sessionId } = await rawInitialize(m.url)
    const resumed = await fetch(m.url, {
      method: 'GET',
      headers: {
        'mcp-session-id': sessionId!,
        'mcp-protocol-version': '2025-11-25',
        Accept: 'text/event-stream',
        'Last-Event-ID': 'nope_7',
      },
    })
    expect(resumed.status).toBe(400)
    expect(((await resumed.json()) as { error: { message: string } }).error.message).toMatch(
      /Last-Event-ID "nope_7" is no event of this session/,
    )
  })
})
