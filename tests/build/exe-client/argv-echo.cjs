// A minimal MCP server with no dependencies (newline-delimited JSON-RPC over
// stdio), for the Windows executable test: its one tool, `argv`, answers
// with the arguments it was started with, so the test sees whether they
// arrived intact (through cmd.exe and a .cmd shim, for one).
'use strict'
const readline = require('node:readline')

const tools = [{ name: 'argv', description: 'The arguments this server was started with, as JSON', inputSchema: { type: 'object' } }]

function send(message) {
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`)
}

function answer(request) {
  switch (request.method) {
    case 'initialize':
      return { protocolVersion: request.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'argv-echo', version: '1.0.0' } }
    case 'ping':
      return {}
    case 'tools/list':
      return { tools }
    case 'tools/call':
      return { content: [{ type: 'text', text: JSON.stringify(process.argv.slice(2)) }] }
    default:
      return undefined
  }
}

readline.createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return
  const request = JSON.parse(line)
  if (request.id === undefined) return
  const result = answer(request)
  if (result) send({ id: request.id, result })
  else send({ id: request.id, error: { code: -32601, message: `unknown method ${request.method}` } })
})
