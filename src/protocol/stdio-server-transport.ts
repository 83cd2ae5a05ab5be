import type { Readable, Writable } from 'node:stream'
import type { JSONRPCMessage, RequestId, Transport } from '@modelcontextprotocol/client'
import { checkInbound, errorReply, JsonRpcError, MAX_NESTING, nestsDeeperThan, parseErrorReply } from './inbound.js'
import { TopLevelIdScanner, topLevelId } from './top-level-id.js'
import { boundedByteLineSplitter } from './byte-lines.js'
import { LineWriter } from './line-writer.js'
import { responseLine } from './result-lines.js'
import { keepArgumentsText, MIN_SPLICED_CHARS } from './request-lines.js'

/** The default cap on one incoming message (`limits.maxMessageBytes`). */
const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024

export interface StdioServerStreamOptions {
  /** Longest message accepted; a longer one is refused with an error and not buffered. */
  maxMessageBytes?: number
  /** Told why a message was refused or dropped (for the log; never on stdout). */
  onRejected?: (reason: string) => void
}

/**
 * The client-facing stdio transport: newline-delimited JSON-RPC on stdin and
 * stdout. Every line gets what JSON-RPC 2.0 owes it (see inbound.ts):
 * requests pass on rebuilt from their known fields, and what cannot be
 * served is answered here, so nothing a client sends can stop the server
 * or go unanswered. Ends (onclose) when stdin ends: the client went away.
 */
export class StdioServerStream implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private closed = false
  private ended = false
  /** Ids of requests read but not yet answered: answered before closing on EOF. */
  private readonly unanswered = new Set<RequestId>()
  private drained: (() => void) | undefined
  private readonly onData: (chunk: Buffer | string) => void
  private readonly onEnd = () => void this.endOfInput()
  private readonly onErr = (error: Error) => this.onerror?.(error)
  private readonly maxBytes: number
  private readonly writer: LineWriter

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly options: StdioServerStreamOptions = {},
  ) {
    this.maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES
    this.writer = new LineWriter(output, (error) => this.onerror?.(error))
    // An oversized line is walked for its id as it arrives (never kept), and refused at its end.
    const oversized = () => {
      const scanner = new TopLevelIdScanner()
      return { feed: (text: string) => scanner.feed(text), end: () => this.refuseOversized(scanner.id()) }
    }
    // A line's bytes come with it when it may be a large call (request-lines.ts keeps no shorter one).
    const limits = { maxBytes: this.maxBytes, bytesAt: MIN_SPLICED_CHARS }
    this.onData = boundedByteLineSplitter((line, bytes) => this.onLine(line, bytes), limits, oversized)
  }

  /** A line of at most maxBytes bytes, as its text (and the bytes it was decoded from, for a long one). */
  private onLine(line: string, bytes: Buffer | undefined): void {
    if (nestsDeeperThan(line, MAX_NESTING)) {
      const reason = `Invalid Request: the message nests arrays and objects deeper than ${MAX_NESTING} levels`
      return this.reject(reason, errorReply(topLevelId(line), JsonRpcError.invalidRequest, reason))
    }
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      this.reject('not valid JSON', parseErrorReply())
      return
    }
    const inbound = checkInbound(value)
    if (inbound.kind === 'invalid') return this.reject(inbound.reason, inbound.reply)
    if (inbound.kind === 'request') {
      this.unanswered.add(inbound.id)
      // A large call's arguments go on to the child as the client wrote them, their bytes (request-lines.ts).
      if (inbound.method === 'tools/call')
        keepArgumentsText(line, (inbound.message as { params?: unknown }).params, bytes)
    }
    this.onmessage?.(inbound.message)
  }

  private refuseOversized(id: RequestId | null): void {
    const reason = `Invalid Request: the message is larger than ${this.maxBytes} bytes (raise limits.maxMessageBytes in the config to accept it)`
    this.reject(reason, errorReply(id, JsonRpcError.invalidRequest, reason))
  }

  private reject(reason: string, reply: JSONRPCMessage | undefined): void {
    this.options.onRejected?.(reason)
    if (reply) void this.send(reply).catch(() => {})
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
    // Bytes, not text: lines are cut and decoded whole (byte-lines.ts), and a large call's bytes go on as they came.
    this.input.on('data', this.onData)
    this.input.on('end', this.onEnd)
    this.input.on('close', this.onEnd)
    this.input.on('error', this.onErr)
    this.output.on('error', this.onErr)
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('transport closed'))
    const m = message as { id?: RequestId; method?: string }
    if (m.method === undefined && m.id !== undefined && this.unanswered.delete(m.id) && this.unanswered.size === 0) {
      // Let the write reach the pipe before a pending EOF closes us.
      const drained = this.drained
      if (drained) setImmediate(drained)
    }
    let line: string | Buffer[]
    try {
      // A child's result relayed as it came is written as the child wrote it, under this client's id (a long one as its bytes).
      line = responseLine(message) ?? JSON.stringify(message)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.writer.write(line)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.writer.flush()
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
