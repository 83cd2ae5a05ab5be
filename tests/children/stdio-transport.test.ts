import type { JSONRPCMessage } from '@modelcontextprotocol/client'
import { describe, expect, it } from 'vitest'
import { ChildStdioTransport } from '../../src/children/stdio-transport.js'
import { waitFor } from '../helpers/wait-for.js'

describe('ChildStdioTransport: what a child writes on stdout', () => {
  it('tells a line that is JSON but no message (null, a number, a string) as an error, and reads on', async () => {
    const lines = ['null', '5', '"text"', 'not json', '{"jsonrpc":"2.0","method":"notifications/message","params":{}}']
    const transport = new ChildStdioTransport({
      command: process.execPath,
      args: [
        '-e',
        `process.stdout.write(${JSON.stringify(lines.map((l) => `${l}\n`).join(''))}); setInterval(() => {}, 1000)`,
      ],
      env: { ...process.env } as Record<string, string>,
    })
    const got: JSONRPCMessage[] = []
    const errors: string[] = []
    transport.onmessage = (message) => got.push(message)
    transport.onerror = (error) => errors.push(error.message)
    await transport.start()
    try {
      await waitFor(() => got.length === 1, 10_000, 'the message after the others')
      expect(got).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: {} }])
      expect(errors).toEqual([
        'not a JSON-RPC message on stdout: null',
        'not a JSON-RPC message on stdout: 5',
        'not a JSON-RPC message on stdout: "text"',
        'not a JSON-RPC message on stdout: not json',
      ])
    } finally {
      await transport.close()
    }
  })
})
