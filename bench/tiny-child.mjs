// The smallest MCP server the scale bench can run a hundred of: plain JSON-RPC lines on stdio, no SDK,
// one tool `echo` (bench/scale.ts, a scoped child's instances).
import { createInterface } from 'node:readline'

const answer = (id, result) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, result })}\n`)
const results = {
  initialize: (p) => ({
    protocolVersion: p?.protocolVersion ?? '2025-11-25',
    capabilities: { tools: {} },
    serverInfo: { name: 'tiny', version: '1.0.0' },
  }),
  ping: () => ({}),
  'tools/list': () => ({
    tools: [{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: { m: { type: 'string' } } } }],
  }),
  'tools/call': (p) => ({ content: [{ type: 'text', text: String(p?.arguments?.m ?? '') }] }),
}
createInterface({ input: process.stdin }).on('line', (line) => {
  let message
  try {
    message = JSON.parse(line)
  } catch {
    return
  }
  if (message.id === undefined) return
  const result = results[message.method]
  if (result) answer(message.id, result(message.params))
  else
    process.stdout.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `no ${message.method}` } })}\n`,
    )
})
