import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { freePort } from './http.js'
import { waitFor } from './runtime.js'
import { requireTool } from './tools.js'

/** A real redis-server (Debian's), on a free loopback port, for the test's life. */
export interface RedisServer {
  url: string
  port: number
  stop(): Promise<void>
  /** Stops the process where it is (SIGSTOP): connections stay open, nothing is answered (as `DEBUG SLEEP` does). */
  pause(): void
  /** Lets a paused Redis go on (SIGCONT): it answers everything it was sent meanwhile. */
  resume(): void
}

/** Whether redis-server is installed (`.ci/run` installs it). */
export function hasRedis(): boolean {
  return requireTool('redis-server', spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).status === 0)
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => socket.write('PING\r\n'))
    socket.once('data', (data) => {
      resolve(data.toString().startsWith('+PONG'))
      socket.destroy()
    })
    socket.once('error', () => resolve(false))
  })
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort()
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-redis-'))
  const proc: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  )
  let up = false
  await waitFor(
    async () => (up = await answersPing(port)) || proc.exitCode !== null,
    10_000,
    'redis-server to answer PING',
  )
  if (!up) throw new Error(`redis-server exited with ${proc.exitCode}`)
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve()
        proc.once('exit', () => resolve())
        // A paused Redis must go on to hear SIGTERM.
        proc.kill('SIGCONT')
        proc.kill('SIGTERM')
      }),
    pause: () => void proc.kill('SIGSTOP'),
    resume: () => void proc.kill('SIGCONT'),
  }
}
