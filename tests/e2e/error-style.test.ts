import { spawnSync } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { waitFor } from '../helpers/runtime.js'
import { Terminal } from '../helpers/terminal.js'
import { requireTool } from '../helpers/tools.js'

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

/**
 * One error style on a terminal for every command (docs/development.md,
 * "Errors and logs on stderr"): `myc: <message>`, one line, never consola's
 * boxed badge between blank lines, whichever command fails and however.
 */
describe.runIf(hasTmux)('errors on a terminal (tmux): one `myc: …` line, every command', () => {
  const term = new Terminal('errors')
  afterAll(() => term.close())

  it('a missing config, a missing key, an unknown server, open mode, a missing id: each one line after myc:', async () => {
    requireBundle()
    const config = writeConfig({ mcpServers: {} })
    const myc = `${process.execPath} ${bundle}`
    const steps = [
      `${myc} tools --config /nonexistent.json`,
      `env -u ANTHROPIC_API_KEY -u ANTHROPIC_AUTH_TOKEN ${myc} run "a task" --config ${config}`,
      `${myc} auth logout nowhere --config ${config}`,
      `${myc} skills --config ${config}`,
      `${myc} sessions show --config ${config}`,
    ]
    // A colour terminal (TERM and no NO_COLOR): the style is the same there as in a pipe, only the prefix is red.
    const script = steps.map((s, i) => `${s}; echo "EXIT${i}=$?"`).join('; ')
    term.open('errors', `env -u NO_COLOR -u CI TERM=xterm-256color sh -c '${script}; sleep 60'`, { cols: 250 })
    const screen = () => term.tmux('capture-pane', '-p', '-t', 'errors')
    await waitFor(() => screen().includes(`EXIT${steps.length - 1}=`), 30_000, 'the last command')
    const lines = screen()
      .split('\n')
      .map((l) => l.trimEnd())
    const text = lines.join('\n')
    expect(text).not.toMatch(/ERROR|\[error\]/)
    // Each command: exactly one line, `myc: …`, straight before its exit code.
    const before = (i: number) => lines[lines.findIndex((l) => l.startsWith(`EXIT${i}=`)) - 1]
    expect(before(0)).toMatch(/^myc: Config file not found: \/nonexistent\.json/)
    expect(before(1)).toMatch(/^myc: no Anthropic credentials: set ANTHROPIC_API_KEY/)
    expect(before(2)).toMatch(/^myc: no server "nowhere" in /)
    expect(before(3)).toMatch(/^myc: open mode: there are no skills/)
    // What is missing, and where the values are: not citty's bare "Missing required positional argument: ID".
    expect(before(4)).toBe(
      'myc: `myc sessions show` needs ID: Session id or saved name (`myc sessions list` shows them); see `myc sessions show --help`',
    )
    expect(lines.filter((l) => l.startsWith('myc: '))).toHaveLength(steps.length)
    expect(lines.filter((l) => /^EXIT\d=[12]$/.test(l))).toHaveLength(steps.length)
  }, 60_000)
})
