// The floor for a relay process over Streamable HTTP, measured beside myc in
// `npm run bench`: the copy relay (copy-relay.mjs) with an HTTP face. It never
// parses JSON. Each POST's body goes to a stdio echo child as it arrives, with
// one string replacement in its first bytes (the bench's `echo__echo` becomes
// `echo`) and a newline; the child's line comes back as the POST's answer,
// `application/json`, as the child wrote it. It answers the handshake no more
// than the SDK's client needs: no session id, 202 to a notification, 405 to a
// GET (no standalone stream) and to anything but POST. A POST and the child's
// answer are matched by their ids, read from the ends of the texts, where the
// TypeScript SDK writes them (`…,"id":7}`): its client is the only one this
// relay serves. While one request waits, the child's answer streams to it as
// the pipe brings it; with more in flight each answer is gathered to its end
// (where its id is) and sent whole. Lines the child sends on its own
// (notifications: they start with `{"method"`) are dropped.
// Usage: node http-copy-relay.mjs <command> [args...]; it prints
// `listening on http://127.0.0.1:<port>/mcp` on stderr.
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'

const [command, ...args] = process.argv.slice(2)
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] })
const NEWLINE = 0x0a
/** The first bytes of a body, where the SDK client writes the tool's name. */
const HEAD = 256
/** The end of a text long enough to hold its id. */
const TAIL = 64

/** The POSTs waiting for the child's answer, by their id's text. */
const waiting = new Map()

/** The `"id":…` value at the end of a JSON-RPC text (`…,"id":7}`), or undefined (a notification). */
function idAtEnd(tail) {
  const m = /,"id":(-?\d+|"[^"\\]*")\}\s*$/.exec(tail)
  return m?.[1]
}

/** The line the child is writing now: its pieces, and the response it streams to (when one request was waiting). */
let line = []
let streaming

function onChildBytes(chunk) {
  let from = 0
  for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
    lineBytes(chunk.subarray(from, at))
    lineEnd()
    from = at + 1
  }
  if (from < chunk.length) lineBytes(chunk.subarray(from))
}

function lineBytes(bytes) {
  if (bytes.length === 0) return
  if (
    line.length === 0 &&
    !streaming &&
    waiting.size === 1 &&
    !bytes.subarray(0, 10).toString().startsWith('{"method"')
  ) {
    // One request waits: nothing but its answer can come (notifications were told apart above), so it streams.
    const [[id, res]] = waiting
    waiting.delete(id)
    streaming = res
    res.writeHead(200, { 'Content-Type': 'application/json' })
  }
  if (streaming) streaming.write(bytes)
  else line.push(bytes)
}

function lineEnd() {
  if (streaming) {
    streaming.end()
    streaming = undefined
    return
  }
  const whole = line.length === 1 ? line[0] : Buffer.concat(line)
  line = []
  const id = idAtEnd(whole.subarray(Math.max(0, whole.length - TAIL)).toString())
  const res = id === undefined ? undefined : waiting.get(id)
  if (!res) return
  waiting.delete(id)
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': whole.length }).end(whole)
}

child.stdout.on('data', onChildBytes)

/** The name the bench's client calls, and the child's: the one rename. */
const NAME = Buffer.from('"echo__echo"')
const CHILD_NAME = Buffer.from('"echo"')

/** The first bytes of a body with the tool's name renamed (when it is there). */
function renamed(head) {
  const at = head.indexOf(NAME)
  return at === -1 ? head : Buffer.concat([head.subarray(0, at), CHILD_NAME, head.subarray(at + NAME.length)])
}

/** Bodies wait their turn for the child's stdin, one line at a time: the one writing now first. */
const turns = []

/** A POST's body to the child, as it comes (or once the body before it is written); its id found in its last bytes. */
function relay(req, res) {
  const body = { head: Buffer.alloc(0), held: [], tail: '', ended: false, req, res }
  turns.push(body)
  req.on('data', (chunk) => {
    if (body.head !== undefined) {
      body.head = Buffer.concat([body.head, chunk])
      if (body.head.length < HEAD) return
      chunk = renamed(body.head)
      body.head = undefined
    }
    if (turns[0] === body) write(body, chunk)
    else body.held.push(chunk)
  })
  req.on('end', () => {
    if (body.head !== undefined) body.held.push(renamed(body.head))
    body.head = undefined
    body.ended = true
    if (turns[0] === body) finish(body)
  })
}

function write(body, bytes) {
  body.tail = (body.tail + bytes.subarray(Math.max(0, bytes.length - TAIL)).toString('latin1')).slice(-TAIL)
  child.stdin.write(bytes)
}

/** A body written whole: its newline, its place among the waiting, and the next body's turn. */
function finish(body) {
  for (const bytes of body.held) write(body, bytes)
  child.stdin.write('\n')
  const id = idAtEnd(body.tail)
  if (id === undefined) body.res.writeHead(202).end()
  else waiting.set(id, body.res)
  turns.shift()
  const next = turns[0]
  if (!next) return
  for (const bytes of next.held.splice(0)) write(next, bytes)
  if (next.ended) finish(next)
}

const server = createServer((req, res) => {
  if (req.method !== 'POST') return void res.writeHead(405, { Allow: 'POST' }).end()
  relay(req, res)
})
server.listen(0, '127.0.0.1', () =>
  process.stderr.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`),
)
child.on('exit', () => server.close())
process.on('SIGTERM', () => {
  child.kill()
  server.close()
  server.closeAllConnections()
})
