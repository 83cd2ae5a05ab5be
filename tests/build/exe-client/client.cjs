// Drives a myc executable as an MCP client would, over stdio pipes, and
// writes what it saw to a JSON file: run by a Windows node.exe under Wine
// (tests/build/windows-executable.slow.test.ts) and by smoke.cjs on the CI
// runners. (Under Wine the test cannot read a program's output through a
// Linux pipe: Wine hands such a pipe to the program as a handle Node cannot
// open. So this one's stdout is a file, and its results go to a file of
// their own; between Windows programs, pipes are Windows pipes and fine.)
//
//   node client.cjs <job.json>
//   job: { myc, config, env: { name: value } (over this process's own), servers: [key…], out }
'use strict'
const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')

const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
const results = { serve: {} }
// The job's variables over this process's own (names in any case on Windows: its Path replaces Path).
const env = { ...process.env }
for (const key of Object.keys(job.env || {})) for (const k of Object.keys(env)) if (k.toUpperCase() === key.toUpperCase()) delete env[k]
Object.assign(env, job.env)

function run(args) {
  const r = spawnSync(job.myc, args, { env, encoding: 'utf8', timeout: 120000, windowsHide: true })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, error: r.error ? r.error.message : null }
}

/** `myc serve` over stdio: initialize, then tools/list and each server's `argv` tool. */
function serve() {
  return new Promise((resolve) => {
    const myc = spawn(job.myc, ['serve', '--verbose', '--config', job.config], { env, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true })
    const waiting = new Map()
    let nextId = 1
    let buffer = ''
    let stderr = ''
    let exit = null
    myc.stderr.setEncoding('utf8').on('data', (d) => (stderr += d))
    // A myc that exits early answers nothing more: each request waiting gets that as its error.
    myc.once('exit', (code, signal) => {
      exit = { code, signal }
      for (const done of waiting.values()) done({ error: { message: `myc exited (${signal || code})` } })
      waiting.clear()
    })
    myc.stdout.setEncoding('utf8').on('data', (chunk) => {
      buffer += chunk
      let nl
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl)
        buffer = buffer.slice(nl + 1)
        if (!line.trim()) continue
        const message = JSON.parse(line)
        const done = waiting.get(message.id)
        if (done) {
          waiting.delete(message.id)
          done(message)
        }
      }
    })
    const request = (method, params) =>
      new Promise((done) => {
        const id = nextId++
        waiting.set(id, done)
        myc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
      })
    const finish = (extra) => {
      clearTimeout(timer)
      const end = () => resolve({ ...extra, exitCode: exit.code, stderr })
      if (exit) return end()
      myc.stdin.end()
      const killer = setTimeout(() => myc.kill(), 5000)
      myc.once('exit', () => {
        clearTimeout(killer)
        end()
      })
    }
    const timer = setTimeout(() => finish({ error: 'timed out' }), 90000)
    myc.once('error', (error) => resolve({ error: error.message, stderr }))
    ;(async () => {
      const init = await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'wine-client', version: '1' } })
      myc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)
      const list = await request('tools/list', {})
      const calls = {}
      for (const key of job.servers) calls[key] = await request('tools/call', { name: `${key}__argv`, arguments: {} })
      finish({ serverInfo: init.result && init.result.serverInfo, tools: list.result ? list.result.tools.map((t) => t.name) : list, calls })
    })().catch((error) => finish({ error: String(error && error.stack) }))
  })
}

;(async () => {
  // Saved after each step, so that a step that hangs or a silent exit still leaves what came before.
  const save = () => fs.writeFileSync(job.out, JSON.stringify(results, null, 2))
  process.once('exit', () => {
    if (results.done) return
    results.incomplete = 'the client exited before it finished'
    save()
  })
  results.version = run(['--version'])
  save()
  results.status = run(['status', '--json', '--config', job.config])
  save()
  results.doctor = run(['doctor', '--config', job.config])
  save()
  results.serve = await serve()
  results.done = true
  save()
})().catch((error) => {
  results.crashed = String(error && error.stack)
  results.done = true
  fs.writeFileSync(job.out, JSON.stringify(results, null, 2))
  process.exitCode = 1
})
