// myc as the client of the conformance runner's auth scenarios
// (`conformance client --command "node tests/conformance/myc-auth-client.mjs"`):
// the runner appends the MCP server's URL and names the scenario and its
// context (a pre-registered client) in the environment. The script writes a
// config naming that server, runs `myc auth login srv --no-browser`, plays the
// person (follows the printed URL; the test authorization server redirects to
// myc's loopback listener at once), then lists and calls tools through
// `myc serve`. Exits 0 when all of it worked.
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

const here = path.dirname(fileURLToPath(import.meta.url))
const bundle = path.join(here, '..', '..', 'build', 'myc.cjs')
const url = process.argv.at(-1)
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}')
const home = mkdtempSync(path.join(tmpdir(), 'myc-conformance-auth-'))
const env = { ...process.env, XDG_CONFIG_HOME: path.join(home, 'config'), HOME: home, MYC_TOKEN_KEY: '' }

const oauth = {
  ...(context.client_id ? { clientId: context.client_id } : {}),
  ...(context.client_secret ? { clientSecret: context.client_secret } : {}),
  ...(scenario === 'auth/basic-cimd' ? { clientMetadataUrl: 'https://conformance-test.local/client-metadata.json' } : {}),
}
const config = path.join(home, 'mycelium.config.json')
// A 2026-07-28 run serves the modern era only: myc asks with server/discover.
const era = (process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? '') >= '2026' ? { era: 'auto' } : {}
writeFileSync(config, JSON.stringify({ mcpServers: { srv: { type: 'http', url, oauth, ...era } } }))
const log = (line) => process.stderr.write(`[myc-auth-client] ${line}\n`)

/** `myc auth login srv --no-browser`, the printed URL followed as the person would. */
function loginOnce() {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bundle, 'auth', 'login', 'srv', '--no-browser', '--timeout', '20', '--config', config], { env, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    let visited = false
    child.stdout.on('data', (chunk) => {
      out += chunk.toString()
      const line = out.split('\n')[0]
      if (!visited && out.includes('\n')) {
        visited = true
        log(`following ${line}`)
        fetch(line, { redirect: 'follow' }).then(
          (r) => log(`the redirect answered ${r.status}`),
          (e) => log(`following the URL failed: ${e}`),
        )
      }
    })
    child.on('close', resolve)
  })
}

/** Lists and calls every tool through `myc serve`; true when a call said to log in again (more scope asked). */
async function useTools() {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bundle, 'serve', '--config', config], env, stderr: 'pipe' })
  // myc serve asks the person again while it runs (a step-up, a moved authorization server): one `myc: authorize: <url>` line each, followed here.
  let pending = ''
  transport.stderr?.on('data', (chunk) => {
    process.stderr.write(chunk)
    pending += chunk.toString()
    const lines = pending.split('\n')
    pending = lines.pop()
    for (const line of lines) {
      const url = /myc: authorize: (\S+)/.exec(line)?.[1]
      if (!url) continue
      log(`myc serve asks to authorize again; following ${url}`)
      fetch(url, { redirect: 'follow' }).then(
        (r) => log(`the redirect answered ${r.status}`),
        (e) => log(`following the URL failed: ${e}`),
      )
    }
  })
  const client = new Client({ name: 'myc-auth-client', version: '1.0.0' })
  let stepUp = false
  try {
    await client.connect(transport)
    const { tools } = await client.listTools()
    log(`tools: ${tools.map((t) => t.name).join(', ') || '(none)'}`)
    for (const tool of tools) {
      const result = await client.callTool({ name: tool.name, arguments: {} }).catch((e) => ({ isError: true, content: [{ type: 'text', text: String(e) }] }))
      const text = result.content?.map((c) => c.text ?? '').join(' ') ?? ''
      if (result.isError) log(`${tool.name}: ${text}`)
      if (/run: myc auth login/.test(text)) stepUp = true
    }
  } finally {
    await client.close()
  }
  return stepUp
}

/** The child's error in `myc status --json`, or null when it runs. */
async function childError() {
  const out = await new Promise((resolve) => {
    const child = spawn(process.execPath, [bundle, 'status', '--json', '--config', config], { env, stdio: ['ignore', 'pipe', 'inherit'] })
    let text = ''
    child.stdout.on('data', (c) => (text += c))
    child.on('close', () => resolve(text))
  })
  const srv = JSON.parse(out).servers.find((s) => s.key === 'srv')
  return srv.state === 'RUNNING' ? null : (srv.error ?? srv.state)
}

const code = await loginOnce()
log(`myc auth login exited ${code}`)
if (code !== 0) process.exit(1)
// The person does what myc says: myc serve asks for an authorization while it runs (followed in useTools); a child
// still FAILED with `run: myc auth login srv`, or a call that says so, is followed by a new login.
let again = await useTools()
if (!again) again = /run: myc auth login/.test((await childError()) ?? '')
if (again) {
  const second = await loginOnce()
  log(`logging in again as myc says: myc auth login exited ${second}`)
  if (second !== 0) process.exit(1)
  await useTools()
}
const error = await childError()
log(`status: ${error === null ? 'RUNNING' : error}`)
process.exit(error === null ? 0 : 1)
