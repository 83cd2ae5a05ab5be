import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
const c = new Client({ name: 'x', version: '1' }, { capabilities: {} })
await c.connect(new StdioClientTransport({ command: process.execPath, args: ['--cpu-prof', '--cpu-prof-dir=/tmp/prof', 'build/myc.cjs', 'serve', '--config', '/tmp/prof/mycelium.config.json'], stderr: 'ignore' }))
await c.listTools()
const t0 = performance.now(); const cpu0 = process.cpuUsage()
let n = 0
await Promise.all(Array.from({ length: 32 }, async () => { while (n < 20000) { n++; await c.callTool({ name: 'echo__echo', arguments: { message: 'hi' } }) } }))
const cpu = process.cpuUsage(cpu0)
console.log('calls/s', (20000 / ((performance.now() - t0) / 1000)).toFixed(0), 'client cpu µs/call', ((cpu.user + cpu.system) / 20000).toFixed(1))
await c.close()
