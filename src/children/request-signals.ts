import type { FetchLike } from '@modelcontextprotocol/client'

/**
 * A fetch for the SDK's HTTP client transports that gives every request an
 * abort signal of its own, following the transport's.
 *
 * The transports hand every request the same long-lived signal (the one
 * their close() aborts), and Node's fetch adds an `abort` listener to it per
 * request that goes only when that request is garbage-collected. Under load
 * thousands pile up: Node prints a MaxListenersExceededWarning per request
 * past 1,500, and each new listener costs more to add (EventTarget scans them
 * for duplicates: ~25 µs a request at 2,000). Here the transport's signal has
 * one listener, which aborts the requests still open; a request leaves that
 * set when it fails, when its answer is not a stream, or when its event
 * stream ends or is cancelled.
 */
export function withOwnSignals(fetchImpl: FetchLike = fetch): FetchLike {
  const open = new WeakMap<AbortSignal, Set<AbortController>>()
  const openFor = (source: AbortSignal): Set<AbortController> => {
    const known = open.get(source)
    if (known) return known
    const controllers = new Set<AbortController>()
    open.set(source, controllers)
    source.addEventListener(
      'abort',
      () => {
        for (const controller of controllers) controller.abort(source.reason)
        controllers.clear()
      },
      { once: true },
    )
    return controllers
  }
  return async (url, init) => {
    const source = init?.signal
    if (!source || source.aborted) return fetchImpl(url, init)
    const own = new AbortController()
    const set = openFor(source)
    set.add(own)
    const done = (): void => void set.delete(own)
    let response: Response
    try {
      response = await fetchImpl(url, { ...init, signal: own.signal })
    } catch (error) {
      done()
      throw error
    }
    const body = response.body
    if (
      !body ||
      response.status !== 200 ||
      !/^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '')
    ) {
      done()
      return response
    }
    return new Response(untilEnd(body, done), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  }
}

/** `body` as it is, with `done` called once it ends, fails or is cancelled. */
function untilEnd(body: ReadableStream<Uint8Array>, done: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read()
        if (ended) {
          done()
          controller.close()
        } else controller.enqueue(value)
      } catch (error) {
        done()
        controller.error(error)
      }
    },
    cancel(reason) {
      done()
      return reader.cancel(reason)
    },
  })
}
