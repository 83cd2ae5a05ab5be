import type { Readable, Writable } from 'node:stream'
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client'
import { lineSplitter } from './json-lines.js'

/**
 * The client-facing stdio transport: newline-delimited JSON-RPC on stdin and
 * stdout. Messages are parsed with JSON.parse only; the SDK's Server validates
 * what it handles itself, and relayed messages must not be reshaped. Ends
 * (onclose) when stdin ends: the MCP client went away.
 */
export class StdioServerStream implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private closed = false
  private ended = false
  /** Ids of requests read but not yet answered: answered before closing on EOF. */
  private readonly unanswered = new Set<string | number>()
  private drained: (() => void) | undefined
  private readonly onData: (chunk: string) => void
  private readonly onEnd = () => void this.endOfInput()
  private readonly onErr = (error: Error) => this.onerror?.(error)

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
  ) {
    this.onData = lineSplitter((line) => {
      let message: JSONRPCMessage
      try {
        message = JSON.parse(line) as JSONRPCMessage
      } catch {
        void this.send({ jsonrpc: '2.0', id: null as unknown as string, error: { code: -32700, message: 'Parse error' } }).catch(() => {})
        return
      }
      const m = message as { id?: string | number; method?: string }
      if (m.method !== undefined && m.id !== undefined) this.unanswered.add(m.id)
      this.onmessage?.(message)
    })
  }

  /**
   * The client closed stdin. Requests it sent before that still get their
   * answers (`echo … | myc` works), within `drainMs`; then the transport closes.
   */
  private async endOfInput(drainMs = 10_000): Promise<void> {
    if (this.ended) return
    this.ended = true
    if (this.unanswered.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainMs)
        timer.unref()
        this.drained = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    await this.close()
  }

  async start(): Promise<void> {
    this.input.setEncoding('utf8')
    this.input.on('data', this.onData)
    this.input.on('end', this.onEnd)
    this.input.on('close', this.onEnd)
    this.input.on('error', this.onErr)
    this.output.on('error', this.onErr)
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('transport closed'))
    const m = message as { id?: string | number; method?: string }
    if (m.method === undefined && m.id !== undefined && this.unanswered.delete(m.id) && this.unanswered.size === 0) {
      // Let the write reach the pipe before a pending EOF closes us.
      const drained = this.drained
      if (drained) setImmediate(drained)
    }
    return new Promise((resolve, reject) => {
      const ok = this.output.write(`${JSON.stringify(message)}\n`, (error) => (error ? reject(error) : undefined))
      if (ok) resolve()
      else this.output.once('drain', resolve)
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.input.off('data', this.onData)
    this.input.off('end', this.onEnd)
    this.input.off('close', this.onEnd)
    this.input.off('error', this.onErr)
    this.output.off('error', this.onErr)
    this.input.pause()
    this.onclose?.()
  }
}
