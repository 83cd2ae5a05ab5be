import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
const [target, name] = process.argv[2] === 'myc' ? [['build/myc.cjs', 'serve', '--config', '/tmp/prof/mycelium.config.json'], 'echo__echo'] : [['tests/fixtures/servers/echo.mjs'], 'echo']
const c = new Client({ name: 'x', version: '1' }, { capabilities: {} })
await c.connect(new StdioClientTransport({ command: process.execPath, args: target, stderr: 'ignore' }))
await c.listTools()
for (const round of [1, 2]) {
const t0 = performance.now(); const cpu0 = process.cpuUsage()
let n = 0
await Promise.all(Array.from({ length: 32 }, async () => { while (n < 10000) { n++; await c.callTool({ name, arguments: { message: 'hi' } }) } }))
const cpu = process.cpuUsage(cpu0)
console.log(process.argv[2], 'calls/s', (10000 / ((performance.now() - t0) / 1000)).toFixed(0), 'client cpu µs/call', ((cpu.user + cpu.system) / 10000).toFixed(1))
}
await c.close()
