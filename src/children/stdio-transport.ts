import { spawn, type ChildProcess } from 'node:child_process'
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client'
import { lineSplitter } from '../protocol/json-lines.js'
import { LineWriter } from '../protocol/line-writer.js'
import { DEFAULT_STOP_BUDGET, signalTree, stopTree, type StopBudget } from './process-tree.js'

/** How to start a stdio child. `command` is run directly, never through a shell. */
export interface StdioChildOptions {
  command: string
  args: readonly string[]
  env: Record<string, string>
  cwd?: string
  /** Each line the child writes to stderr. */
  onStderrLine?: (line: string) => void
}

/** How the child process ended. */
export interface ExitInfo {
  code: number | null
  signal: NodeJS.Signals | null
}

/**
 * An MCP transport over a child process's stdin/stdout. Unlike the SDK's
 * StdioClientTransport it starts the child as its own process group, so
 * closing it ends the whole tree (npx, sh wrappers and the real server), and
 * it parses messages with plain JSON.parse: the SDK's Protocol validates what
 * it handles, and relayed results must pass through untouched.
 */
export class ChildStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  private child?: ChildProcess
  private closed = false
  /** One write per event-loop turn to the child's stdin. */
  private writer: LineWriter | undefined
  exitInfo?: ExitInfo
  /** How long close() waits at each step; the owner may shorten it before closing. */
  stopBudget: StopBudget = DEFAULT_STOP_BUDGET

  constructor(private readonly options: StdioChildOptions) {}

  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ChildStdioTransport already started')
    return new Promise((resolve, reject) => {
      const { command, args, env, cwd } = this.options
      const child = spawn(command, [...args], {
        env,
        cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
        detached: process.platform !== 'win32',
      })
      this.child = child
      let started = false
      child.once('spawn', () => {
        started = true
        resolve()
      })
      child.once('error', (error) => {
        if (!started) {
          reject(error)
          this.finish()
          return
        }
        this.onerror?.(error)
      })
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal }
        // Reap anything the child left in its group (a server behind `npx`),
        // which would otherwise hold the pipes open.
        signalTree(child, 'SIGKILL')
      })
      // 'close' comes after the last stdout data, unlike 'exit'.
      child.once('close', () => this.finish())
      child.stdin.on('error', (error) => this.onerror?.(error))
      child.stdout.setEncoding('utf8')
      child.stdout.on('data', lineSplitter((line) => this.onLine(line)))
      child.stderr.setEncoding('utf8')
      // A child that never ends its stderr lines must not grow memory forever.
      child.stderr.on('data', lineSplitter((line) => this.options.onStderrLine?.(line), { maxLength: 64 * 1024 }))
    })
  }

  private onLine(line: string): void {
    let message: JSONRPCMessage
    try {
      message = JSON.parse(line) as JSONRPCMessage
    } catch {
      this.onerror?.(new Error(`not a JSON-RPC message on stdout: ${line.slice(0, 200)}`))
      return
    }
    this.onmessage?.(message)
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin
    if (!stdin || this.closed || !stdin.writable) return Promise.reject(new Error('child process is not running'))
    let line: string
    try {
      line = JSON.stringify(message)
    } catch (error) {
      return Promise.reject(error)
    }
    this.writer ??= new LineWriter(stdin, (error) => this.onerror?.(error))
    return this.writer.write(line)
  }

  async close(): Promise<void> {
    const child = this.child
    this.writer?.flush()
    if (!child || this.closed) {
      this.finish()
      return
    }
    await stopTree(child, this.stopBudget)
    this.finish()
  }

  private finish(): void {
    if (this.closed) return
    this.closed = true
    this.onclose?.()
  }
}
