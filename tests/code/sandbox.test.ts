import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Client } from '@modelcontextprotocol/client'
import { loadConfig } from '../../src/config/load.js'
import { CodeRunner } from '../../src/code/code-runner.js'
import { codeProject, hasBwrap, runCode, runnerProcesses, testCodeRunner } from '../helpers/code-mode.js'
import { connectClient, PolicyHarness } from '../helpers/runtime.js'
import { waitFor } from '../helpers/wait-for.js'

/**
 * What code cannot do from inside a run (SECURITY.md, "Code mode"): each
 * test tries, through a real client's run_code, and checks it failed and
 * left nothing behind.
 */
describe.runIf(hasBwrap)('code mode: the sandbox around the code', () => {
  // The smallest memory limit there is (the memory bomb fills it, and a smaller one is less to fill).
  const file = codeProject({ codeMode: { mounts: ['.'], maxOutputBytes: 4096, memoryMb: 128 } })
  const dir = path.dirname(file)
  mkdirSync(path.join(dir, 'data'))
  writeFileSync(path.join(dir, 'data', 'a.txt'), 'mounted text')
  mkdirSync(path.join(dir, '.mycelium', 'memory'), { recursive: true })
  writeFileSync(path.join(dir, '.mycelium', 'memory', 'guest.memory.md'), 'a secret of the guest role')
  const h = new PolicyHarness(() => loadConfig({ configPath: file, cwd: dir, env: {} }))
  let runner: CodeRunner
  let client: Client
  let listener: Server
  let connections = 0
  beforeAll(async () => {
    await h.start()
    runner = await testCodeRunner(h.loaded)
    client = (await connectClient(h.runtime, { view: await h.view('guest', { codeRunner: runner }) })).client
    listener = createServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve))
  })
  afterAll(async () => {
    listener?.close()
    await client?.close()
    await h.close()
  })
  const nothingLeft = () => waitFor(() => runnerProcesses().length === 0, 10_000, 'every process of the run to end')

  it('has no network: a listener on the host’s 127.0.0.1 sees no connection, and no other address is reached', async () => {
    const port = (listener.address() as { port: number }).port
    const r = await runCode(
      client,
      `const net = require('node:net')
       const attempt = (host, port) => new Promise((resolve) => {
         const s = net.connect(port, host, () => resolve('connected'))
         s.on('error', (e) => resolve(e.code))
       })
       return [await attempt('127.0.0.1', ${port}), await attempt('1.1.1.1', 80), Object.keys(require('node:os').networkInterfaces())]`,
    )
    expect(JSON.parse(r.text)).toEqual(['ECONNREFUSED', 'ENETUNREACH', ['lo']])
    expect(connections).toBe(0)
  })

  it('reads no file of the host or of myc’s state, only the mounts (read-only), and its scratch folder is its own', async () => {
    const r = await runCode(
      client,
      `const fs = require('node:fs')
       const read = (p) => { try { return fs.readFileSync(p, 'utf8') } catch (e) { return e.code } }
       const list = (p) => { try { return fs.readdirSync(p) } catch (e) { return e.code } }
       const write = (p) => { try { fs.writeFileSync(p, 'x'); return 'written' } catch (e) { return e.code } }
       fs.writeFileSync('/tmp/left-behind', 'x')
       return {
         passwd: read('/etc/passwd'), root: list('/root'), home: list('/home'),
         mounted: read(${JSON.stringify(path.join(dir, 'data', 'a.txt'))}),
         config: read(${JSON.stringify(file)}),
         skills: list(${JSON.stringify(path.join(dir, 'skills'))}),
         memory: list(${JSON.stringify(path.join(dir, '.mycelium'))}),
         writeMount: write(${JSON.stringify(path.join(dir, 'data', 'b.txt'))}),
         env: Object.keys(process.env).sort(),
       }`,
    )
    expect(JSON.parse(r.text)).toEqual({
      passwd: 'ENOENT',
      root: 'ENOENT',
      home: 'ENOENT',
      mounted: 'mounted text',
      config: '',
      skills: [],
      memory: [],
      writeMount: 'EROFS',
      env: ['HOME', 'LANG', 'MYC_CODE_RUNNER', 'PWD', 'TMPDIR'],
    })
    const next = await runCode(client, "return require('node:fs').existsSync('/tmp/left-behind')")
    expect(next.text).toBe('false')
    expect(existsSync('/tmp/left-behind')).toBe(false)
  })

  it('ends `while (true) {}` at the time limit with a clear error, and the session keeps working', async () => {
    const quick = new CodeRunner(runner.setup, { ...runner.limits, timeoutMs: 1_500 })
    const session = (await connectClient(h.runtime, { view: await h.view('guest', { codeRunner: quick }) })).client
    const r = await runCode(session, 'while (true) {}')
    expect(r).toEqual({
      text: 'The run stopped at the time limit (codeMode.timeoutMs, 1500 ms): it was ended with everything it ran.',
      isError: true,
    })
    await nothingLeft()
    expect(await runCode(session, "return await tools.echo.echo({ message: 'still here' })")).toEqual({
      text: '"still here"',
      isError: false,
    })
    await session.close()
  })

  it('ends a memory bomb at the memory limit, on the heap and off it', async () => {
    const heap = await runCode(client, 'const a = []\nwhile (true) a.push(new Array(1e6).fill(1.5))')
    expect(heap).toEqual({ text: 'The run stopped at the memory limit (codeMode.memoryMb, 128 MB).', isError: true })
    // Off the heap, whichever allocation meets the limit first decides: the code's own (a RangeError it could catch), or the process's.
    const buffers = await runCode(client, 'const a = []\nwhile (true) a.push(Buffer.alloc(16e6, 1))')
    expect(buffers.isError).toBe(true)
    expect([
      'RangeError: Array buffer allocation failed\n    at code.js:2:28',
      'The run stopped at the memory limit (codeMode.memoryMb, 128 MB).',
    ]).toContain(buffers.text)
    const scratch = await runCode(
      client,
      "try { for (let i = 0; i < 64; i++) require('node:fs').writeFileSync(`/tmp/f${i}`, Buffer.alloc(8e6)) } catch (e) { return e.code }",
    )
    expect(scratch.text).toBe('"ENOSPC"')
    await nothingLeft()
  })

  it('starts no process: a fork bomb makes none, and nothing of the run outlives it', async () => {
    const r = await runCode(
      client,
      `const cp = require('node:child_process')
       const codes = new Set()
       for (let i = 0; i < 50; i++) {
         try { cp.spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']).on('error', (e) => codes.add(e.code)) }
         catch (e) { codes.add(e.code) }
       }
       await new Promise((r) => setTimeout(r, 50))
       return [...codes]`,
    )
    expect(JSON.parse(r.text)).toEqual(['EPERM'])
    await nothingLeft()
  })

  it('cuts an output flood at codeMode.maxOutputBytes, with a line saying so', async () => {
    const r = await runCode(client, "for (let i = 0; i < 100000; i++) console.log('x'.repeat(100))\nreturn 'done'")
    expect(r.isError).toBe(false)
    const [body, last] = [r.text.slice(0, r.text.lastIndexOf('\n')), r.text.slice(r.text.lastIndexOf('\n') + 1)]
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(4096)
    expect(last).toBe('[myc: the output was cut at codeMode.maxOutputBytes, 4096 bytes]')
    const value = await runCode(client, "return 'y'.repeat(10000)")
    expect(value.text.endsWith('\n[myc: the output was cut at codeMode.maxOutputBytes, 4096 bytes]')).toBe(true)
    expect(Buffer.byteLength(value.text)).toBeLessThan(4096 + 100)
  })
})
