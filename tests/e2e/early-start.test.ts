import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { bundle, connectToMyc, isAlive, requireBundle } from '../helpers/e2e.js'
import { fixtureEntry } from '../helpers/runtime.js'

/**
 * `myc serve` starts its stdio children before the rest of it is loaded
 * (src/children/prespawn.ts); the connection takes each over. Nothing a
 * child says or does in between may be lost, and a child nobody takes over
 * may not outlive myc.
 */
describe('myc serve starts its children first (build/myc.cjs)', () => {
  const cleanups: Array<() => Promise<void>> = []
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c()
  })

  it('a child that says why and exits at once: its words and exit reach the log, the others serve', async () => {
    // Policy mode: reading the skills takes turns of the event loop before the children are taken over, so what they write meanwhile is read (and must be kept).
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-early-'))
    for (let i = 0; i < 20; i++) {
      mkdirSync(path.join(dir, 'skills', `skill-${i}`), { recursive: true })
      writeFileSync(
        path.join(dir, 'skills', `skill-${i}`, 'SKILL.md'),
        `---\nname: skill-${i}\ndescription: echo tools\nallowedRoles: [dev]\nallowedTools: ["echo:*"]\n---\n`,
      )
    }
    const config = path.join(dir, 'mycelium.config.json')
    writeFileSync(
      config,
      JSON.stringify({
        roles: { default: 'dev' },
        session: { defaultSkills: ['skill-0'] },
        mcpServers: {
          echo: fixtureEntry('echo'),
          // sh is done within a millisecond or two: long before myc has loaded enough to take the child over.
          broken: {
            command: 'sh',
            args: ['-c', 'echo "boom: OPENWEATHER_KEY is not set" >&2; exit 3'],
            restart: { maxRetries: 0 },
          },
          missing: { command: 'no-such-mcp-server-anywhere', restart: { maxRetries: 0 } },
          // Node refuses to spawn this at once (a NUL byte): a failed start, not a crash of myc.
          nul: { command: 'sh', args: ['-c', 'echo a\u0000b'], restart: { maxRetries: 0 } },
        },
      }),
    )
    const { client, transport } = await connectToMyc(['serve', '--config', config])
    let stderr = ''
    transport.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    cleanups.push(() => client.close())
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).toContain('echo__echo')
    expect(names.some((n) => n.startsWith('broken') || n.startsWith('missing') || n.startsWith('nul'))).toBe(false)
    // The log says it all: the child's own words (written before anything read them), its exit, and the missing command.
    for (let i = 0; i < 50 && !stderr.includes('exited with code 3'); i++) await new Promise((r) => setTimeout(r, 100))
    expect(stderr).toContain('boom: OPENWEATHER_KEY is not set')
    expect(stderr).toContain('it exited with code 3 before finishing initialize')
    expect(stderr).toContain('command not found: "no-such-mcp-server-anywhere"')
    expect(stderr).toMatch(/ nul: could not start: [^\n]*null bytes/)
  })

  it('a serve that fails after starting its children leaves none of them running', () => {
    requireBundle()
    const dir = mkdtempSync(path.join(tmpdir(), 'myc-early-'))
    const pidFile = path.join(dir, 'child.pid')
    // Policy mode with no role to serve: exit 2 once the skills are read, after the children started.
    mkdirSync(path.join(dir, 'skills', 'dev-tools'), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', 'dev-tools', 'SKILL.md'),
      '---\nname: dev-tools\ndescription: tools\nallowedRoles: [dev, ops]\nallowedTools: ["sleepy:*"]\n---\n',
    )
    writeFileSync(
      path.join(dir, 'mycelium.config.json'),
      JSON.stringify({
        mcpServers: { sleepy: { command: 'sh', args: ['-c', `echo $$$$ > "${pidFile}"; exec sleep 30`] } },
      }),
    )
    const r = spawnSync(process.execPath, [bundle, 'serve', '--config', path.join(dir, 'mycelium.config.json')], {
      input: '',
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(r.status, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/role/)
    expect(existsSync(pidFile)).toBe(true)
    // `$$$$` in the config is sh's `$$` (the config expands `$$` to `$`).
    const pid = Number(readFileSync(pidFile, 'utf8').trim())
    expect(Number.isSafeInteger(pid) && pid > 1).toBe(true)
    const deadline = Date.now() + 2_000
    while (isAlive(pid) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50)
    expect(isAlive(pid)).toBe(false)
  })
})
