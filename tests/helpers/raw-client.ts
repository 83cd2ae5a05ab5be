import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { bundle } from './e2e.js'

/**
 * `myc serve` spoken to line by line, as a hostile client would: every line
 * on stdout must be a JSON-RPC message, and every answer is recorded by id.
 */
export class RawClient {
  readonly proc: ChildProcessWithoutNullStreams
  readonly answers = new Map<string, unknown[]>()
  readonly nullIdAnswers: unknown[] = []
  readonly notJsonRpc: string[] = []
  stderr = ''
  private buffer = ''
  private waiters = new Map<string, (answer: unknown) => void>()
  readonly exited: Promise<number | null>

  /** `nodeArgs`: flags for the Node that runs the bundle (the soak's `--expose-gc`). */
  constructor(config: string, nodeArgs: readonly string[] = []) {
    this.proc = spawn(process.execPath, [...nodeArgs, bundle, 'serve', '--config', config], { stdio: 'pipe' })
    this.exited = new Promise((resolve) => this.proc.once('exit', (code) => resolve(code)))
    this.proc.stderr.setEncoding('utf8')
    this.proc.stderr.on('data', (chunk: string) => {
      this.stderr += chunk
    })
    this.proc.stdout.setEncoding('utf8')
    this.proc.stdout.on('data', (chunk: string) => {
      this.buffer += chunk
      let nl: number
      while ((nl = this.buffer.indexOf('\n')) !== -1) {
        const line = this.buffer.slice(0, nl)
        this.buffer = this.buffer.slice(nl + 1)
        this.onLine(line)
      }
    })
  }

  private onLine(line: string): void {
    let message: { jsonrpc?: unknown; id?: unknown; method?: unknown }
    try {
      message = JSON.parse(line)
    } catch {
      this.notJsonRpc.push(line)
      return
    }
    if (message.jsonrpc !== '2.0') this.notJsonRpc.push(line)
    if (message.method !== undefined) return // a notification or request from myc
    if (message.id === null) {
      this.nullIdAnswers.push(message)
      return
    }
    const key = JSON.stringify(message.id)
    this.answers.set(key, [...(this.answers.get(key) ?? []), message])
    this.waiters.get(key)?.(message)
    this.waiters.delete(key)
  }

  write(line: string | Buffer): void {
    this.proc.stdin.write(Buffer.concat([typeof line === 'string' ? Buffer.from(line) : line, Buffer.from('\n')]))
  }

  request(
    id: string,
    method: string,
    params?: unknown,
  ): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
    const answer = new Promise<unknown>((resolve) => this.waiters.set(JSON.stringify(id), resolve))
    this.write(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }))
    return answer as never
  }

  rssKiB(): number {
    const status = readFileSync(`/proc/${this.proc.pid}/status`, 'utf8')
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1])
  }
}
