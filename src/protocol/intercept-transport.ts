import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client'

/** Returns true when it has taken the message, so the SDK's Protocol never sees it. */
export type Interceptor = (message: JSONRPCMessage, extra?: MessageExtraInfo) => boolean

/**
 * Wraps a transport so that some incoming messages are handled below the
 * SDK's request layer (the relay's hot path: forwarded requests, their
 * responses, progress and cancellation) and all others reach the SDK as usual.
 * Sending goes straight to the inner transport, for the SDK and the relay alike.
 *
 * `listen()` opens the inner transport before the SDK connects (a child
 * process spawns, a client's first lines are read): messages wait in order
 * until `start()`, and `peek` sees each one as it arrives.
 */
export class InterceptTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void
  interceptor: Interceptor | undefined
  private early:
    | {
        started: Promise<void>
        queue: Array<[JSONRPCMessage, MessageExtraInfo | undefined]>
        peek?: (message: JSONRPCMessage) => void
        closed?: () => void
        wasClosed?: boolean
      }
    | undefined

  constructor(
    readonly inner: Transport,
    interceptor?: Interceptor,
  ) {
    this.interceptor = interceptor
    inner.onmessage = (message, extra) => {
      if (this.early) {
        this.early.peek?.(message)
        this.early.queue.push([message, extra])
        return
      }
      this.deliver(message, extra)
    }
    inner.onclose = () => {
      // Closed before the SDK was there to hear it (stdin ended first): told once the queue is handed over.
      if (this.early) {
        this.early.wasClosed = true
        this.early.closed?.()
      } else this.onclose?.()
    }
    inner.onerror = (error) => this.onerror?.(error)
  }

  private deliver(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if (this.interceptor?.(message, extra)) return
    this.onmessage?.(message, extra)
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId
  }

  /**
   * Starts the inner transport now; what arrives waits for `start()`. `peek`
   * sees each message as it arrives, `closed` hears at once when the peer
   * goes away before that.
   */
  listen(observer: { peek?: (message: JSONRPCMessage) => void; closed?: () => void } = {}): Promise<void> {
    if (!this.early) this.early = { started: this.inner.start(), queue: [], ...observer }
    return this.early.started
  }

  async start(): Promise<void> {
    const early = this.early
    if (!early) return this.inner.start()
    await early.started
    // The SDK finishes connecting after start() returns; hand over what waited right after.
    setImmediate(() => {
      this.early = undefined
      for (const [message, extra] of early.queue) this.deliver(message, extra)
      if (early.wasClosed) this.onclose?.()
    })
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options)
  }

  close(): Promise<void> {
    return this.inner.close()
  }

  get hasPerRequestStream(): boolean | undefined {
    return this.inner.hasPerRequestStream
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version)
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions)
  }
}
