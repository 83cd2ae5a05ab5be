import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PrespawnedChildren } from '../../src/children/prespawn.js'
import { currentHost } from '../../src/children/resolve-command.js'
import { stdioSpawnSpec } from '../../src/children/spawn-spec.js'
import { ChildStdioTransport } from '../../src/children/stdio-transport.js'
import type { StdioServerConfig } from '../../src/config/server-schema.js'
import { isAlive } from '../helpers/e2e.js'
import { loadedConfig } from '../helpers/runtime.js'

const host = currentHost(false)
const until = async (ok: () => boolean, ms = 20_000) => {
  const deadline = Date.now() + ms
  while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  return ok()
}

describe('PrespawnedChildren', () => {
  it('starts the eager stdio servers only, and a transport takes one over with all it wrote and did meanwhile', async () => {
    const loaded = loadedConfig({
      mcpServers: {
        early: {
          command: 'sh',
          args: [
            '-c',
            `echo '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}'; echo 'to stderr' >&2; exit 4`,
          ],
        },
        lazy: { command: 'sh', args: ['-c', 'sleep 30'], startup: 'lazy' },
        off: { command: 'sh', args: ['-c', 'sleep 30'], disabled: true },
        remote: { url: 'http://127.0.0.1:9/mcp' },
      },
    })
    const prespawned = PrespawnedChildren.start(loaded, host)
    expect(prespawned.size).toBe(1)
    const spec = stdioSpawnSpec(loaded.config.servers.get('early') as StdioServerConfig, host, loaded.dir)
    const early = prespawned.take('early', spec)!
    expect(early).toBeDefined()
    // It is done long before anyone reads it.
    expect(await until(() => early.closed)).toBe(true)
    expect(prespawned.take('early', spec)).toBeUndefined()
    const stderr: string[] = []
    const messages: unknown[] = []
    const transport = new ChildStdioTransport({ ...spec, early, onStderrLine: (line) => stderr.push(line) })
    let closed = false
    transport.onmessage = (m) => messages.push(m)
    transport.onclose = () => (closed = true)
    await transport.start()
    expect(await until(() => closed)).toBe(true)
    expect(messages).toEqual([
      { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } },
    ])
    expect(stderr).toEqual(['to stderr'])
    expect(transport.exitInfo).toEqual({ code: 4, signal: null })
  })

  it('stops a child whose spec changed before it was taken, and the ones nobody took', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-prespawn-'))
    const sleeper = (name: string) => ({
      command: 'sh',
      args: ['-c', `echo $$$$ > "${path.join(dir, name)}"; exec sleep 30`],
    })
    const loaded = loadedConfig({ mcpServers: { a: sleeper('a'), b: sleeper('b') } })
    const prespawned = PrespawnedChildren.start(loaded, host)
    const spec = stdioSpawnSpec(loaded.config.servers.get('a') as StdioServerConfig, host, loaded.dir)
    expect(await until(() => existsSync(path.join(dir, 'a')) && existsSync(path.join(dir, 'b')))).toBe(true)
    const pidOf = (name: string) => Number(readFileSync(path.join(dir, name), 'utf8').trim())
    const pids = { a: pidOf('a'), b: pidOf('b') }
    expect(isAlive(pids.a) && isAlive(pids.b)).toBe(true)
    expect(prespawned.take('a', { ...spec, env: { ...spec.env, EXTRA: '1' } })).toBeUndefined()
    expect(await until(() => !isAlive(pids.a))).toBe(true)
    expect(isAlive(pids.b)).toBe(true)
    prespawned.stopAll()
    expect(await until(() => !isAlive(pids.b))).toBe(true)
  })

  it('a command that cannot start: the transport that takes it over fails as a spawn of its own would', async () => {
    const loaded = loadedConfig({ mcpServers: { gone: { command: '/no/such/mcp-server' } } })
    const prespawned = PrespawnedChildren.start(loaded, host)
    const spec = stdioSpawnSpec(loaded.config.servers.get('gone') as StdioServerConfig, host, loaded.dir)
    const early = prespawned.take('gone', spec)!
    await until(() => early.error !== undefined)
    await expect(new ChildStdioTransport({ ...spec, early }).start()).rejects.toMatchObject({ code: 'ENOENT' })
    // Taken before the error arrived: the same answer.
    const again = PrespawnedChildren.start(loaded, host).take('gone', spec)!
    await expect(new ChildStdioTransport({ ...spec, early: again }).start()).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
