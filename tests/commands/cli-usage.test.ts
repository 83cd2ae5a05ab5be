import { describe, expect, it } from 'vitest'
import { runHere as myc } from '../helpers/cli.js'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'

const echoConfig = () =>
  writeConfig({ mcpServers: { echo: { command: process.execPath, args: [fixtureServer('echo')] } } })

describe('myc (in process): a strict command line', () => {
  it('an unknown flag, a flag without its value or an extra argument exits 2 naming it and the nearest valid one', async () => {
    const typo = await myc(['status', '--jsno'])
    expect(typo.code).toBe(2)
    expect(typo.stdout).toBe('')
    expect(typo.stderr).toContain('unknown flag --jsno for myc status (did you mean --json?)')
    const role = await myc(['tools', '--rol', 'guest'])
    expect(role.code).toBe(2)
    expect(role.stderr).toContain('unknown flag --rol for myc tools (did you mean --role?)')
    const noValue = await myc(['tools', '--role'])
    expect(noValue.code).toBe(2)
    expect(noValue.stderr).toContain('--role needs a value for myc tools')
    const extra = await myc(['status', 'extra-arg'])
    expect(extra.code).toBe(2)
    expect(extra.stderr).toContain('unexpected argument "extra-arg" for myc status')
    const nested = await myc(['sandbox', 'exec', '--trust', 'restricted', '--bogus-flag', '--', 'echo', '--bogus-flag'])
    expect(nested.code).toBe(2)
    expect(nested.stderr).toContain('unknown flag --bogus-flag for myc sandbox exec')
  })

  it('with --json, a usage error is the JSON error document on stdout', async () => {
    const { code, stdout } = await myc(['status', '--json', '--jsno'])
    expect(code).toBe(2)
    expect(JSON.parse(stdout)).toEqual({
      ok: false,
      error: { code: 'usage', message: 'unknown flag --jsno for myc status (did you mean --json?)' },
    })
  })

  it("a usage error of citty's own (a missing positional argument) exits 2 with the code usage", async () => {
    const { code, stdout } = await myc(['skills', 'show', '--json'])
    expect(code).toBe(2)
    expect(JSON.parse(stdout).error).toMatchObject({ code: 'usage', message: expect.stringContaining('ID') })
  })

  it('global flags go before or after the command: myc --era modern status', async () => {
    for (const args of [
      ['--era', 'modern', 'status', '--json', '--config', echoConfig()],
      ['--config', echoConfig(), '--json', 'status', '--era', 'modern'],
    ]) {
      const { code, stdout } = await myc(args)
      expect(code).toBe(0)
      expect(JSON.parse(stdout).servers[0]).toMatchObject({ key: 'echo', state: 'RUNNING' })
    }
  })

  it('with no subcommand, the flags are serve’s (myc --config F --role R)', async () => {
    const { code, stderr } = await myc(['--config', echoConfig(), '--role', 'guest', '--sklls', 'a'])
    expect(code).toBe(2)
    expect(stderr).toContain('unknown flag --sklls for myc serve (did you mean --skills?)')
  })

  it('myc run x --bogus-flag exits 2 before contacting the API', async () => {
    const { FakeAnthropic } = await import('../helpers/fake-anthropic.js')
    const { runAgentHere } = await import('../helpers/agent.js')
    const fake = await new FakeAnthropic([{ content: [{ type: 'text', text: 'done' }] }]).start()
    try {
      const r = await runAgentHere(['run', 'x', '--bogus-flag', '--config', echoConfig()], { fake })
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('unknown flag --bogus-flag for myc run')
      expect(fake.requests).toHaveLength(0)
    } finally {
      await fake.close()
    }
  })
})

describe('myc (in process): usage', () => {
  it('myc help [COMMAND] prints the same usage as --help; an unknown one is a usage error', async () => {
    expect((await myc(['help'])).stdout).toBe((await myc(['--help'])).stdout)
    expect((await myc(['help'])).code).toBe(0)
    const status = await myc(['help', 'status'])
    expect(status.code).toBe(0)
    expect(status.stdout).toBe((await myc(['status', '--help'])).stdout)
    expect((await myc(['help', 'skills', 'lint'])).stdout).toBe((await myc(['skills', 'lint', '--help'])).stdout)
    const unknown = await myc(['help', 'frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/Unknown command "frobnicate"/)
  })
})

describe('myc (in process): help and output agree', () => {
  it('status: the help names what each line shows (state, tools, prompts, resources, MCP version, or the error); the start time is in --json', async () => {
    const help = (await myc(['status', '--help'])).stdout.replace(/\s+/g, ' ')
    expect(help).toContain(
      'state and its tools, prompts, resources and MCP version, or its error (--json: also its start time)',
    )
    const config = writeConfig({
      mcpServers: {
        echo: { command: process.execPath, args: [fixtureServer('echo')] },
        broken: { command: '/no/such/binary' },
      },
    })
    const text = (await myc(['status', '--config', config])).stdout
    expect(text).toMatch(/^RUNNING +echo +5 tools, 1 prompts, 1 resources, MCP \S+$/m)
    expect(text).toMatch(/^FAILED +broken +command not found/m)
    expect(JSON.parse((await myc(['status', '--json', '--config', config])).stdout).servers[0].startedAt).toMatch(
      /^\d{4}-/,
    )
  })

  it('tools: each line has the columns the help names: wire name, canonical id, the description’s first line', async () => {
    const help = (await myc(['tools', '--help'])).stdout.replace(/\s+/g, ' ')
    expect(help).toContain('wire name, canonical id (server:tool) and the first line of the description')
    expect(help).not.toMatch(/description, server|, server,/)
    const lines = (await myc(['tools', '--config', echoConfig()])).stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^echo__echo +echo:echo +Returns its message$/)
    expect(lines.every((l) => /^\S+ +\S+:\S+ {2}/.test(l))).toBe(true)
  })
})
