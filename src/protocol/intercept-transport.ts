import type { JSONRPCMessage, MessageExtraInfo, Transport, TransportSendOptions } from '@modelcontextprotocol/client'

/** Returns true when it has taken the message, so the SDK's Protocol never sees it. */
export type Interceptor = (message: JSONRPCMessage, extra?: MessageExtraInfo) => boolean

/**
 * Wraps a transport so that some incoming messages are handled below the
 * SDK's request layer (the relay's hot path: forwarded requests, their
 * responses, progress and cancellation) and all others reach the SDK as usual.
 * Sending goes straight to the inner transport, for the SDK and the relay alike.
 */
export class InterceptTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void
  interceptor: Interceptor | undefined

  constructor(readonly inner: Transport, interceptor?: Interceptor) {
    this.interceptor = interceptor
    inner.onmessage = (message, extra) => {
      if (this.interceptor?.(message, extra)) return
      this.onmessage?.(message, extra)
    }
    inner.onclose = () => this.onclose?.()
    inner.onerror = (error) => this.onerror?.(error)
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId
  }

  start(): Promise<void> {
    return this.inner.start()
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
