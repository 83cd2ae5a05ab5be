// The floor for any relay, measured beside myc in `npm run bench`: a JSON-RPC
// relay in Node with nothing but id mapping and one name rewrite (no checks,
// no policy, no cancellation, no timeouts). Usage: node bare-relay.mjs <command> [args...]
import { spawn } from 'node:child_process'

const [command, ...args] = process.argv.slice(2)
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] })
const pending = new Map()
let next = 0

function lines(onLine) {
  let buffer = ''
  return (chunk) => {
    let start = 0
    let nl
    while ((nl = chunk.indexOf('\n', start)) !== -1) {
      onLine(buffer + chunk.slice(start, nl))
      buffer = ''
      start = nl + 1
    }
    buffer += chunk.slice(start)
  }
}

// One write per event-loop turn, as myc does.
function writer(stream) {
  let queued = []
  let scheduled = false
  return (line) => {
    queued.push(line)
    if (scheduled) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      stream.write(`${queued.join('\n')}\n`)
      queued = []
    })
  }
}

const toChild = writer(child.stdin)
const toClient = writer(process.stdout)

process.stdin.setEncoding('utf8').on('data', lines((line) => {
  const message = JSON.parse(line)
  if (message.id !== undefined && message.method !== undefined) {
    const id = `r${++next}`
    pending.set(id, message.id)
    if (message.method === 'tools/call') message.params.name = message.params.name.replace(/^echo__/, '')
    message.id = id
  }
  toChild(JSON.stringify(message))
}))
process.stdin.on('end', () => child.kill())
child.stdout.setEncoding('utf8').on('data', lines((line) => {
  const message = JSON.parse(line)
  if (message.method === undefined && pending.has(message.id)) {
    const id = pending.get(message.id)
    pending.delete(message.id)
    message.id = id
  }
  toClient(JSON.stringify(message))
}))
