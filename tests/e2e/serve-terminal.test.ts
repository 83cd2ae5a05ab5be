import { spawnSync } from 'node:child_process'
import { afterAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { Terminal } from '../helpers/terminal.js'
import { requireTool } from '../helpers/tools.js'

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

/**
 * `myc serve` typed at a terminal speaks MCP on stdin all the same; it says
 * so once on stderr, with the entry a client needs to start it, and only
 * when stdin is a terminal (a client's pipe never gets the line).
 */
describe.runIf(hasTmux)('myc serve on a terminal (tmux)', () => {
  const term = new Terminal('serve')
  afterAll(() => term.close())
  const config = writeConfig({ mcpServers: { echo: fixtureEntry('echo') } })
  const myc = `${process.execPath} ${bundle}`

  it('says once that it speaks MCP on stdin and how to connect a client; Ctrl-C stops it', async () => {
    requireBundle()
    term.open('tty', `${myc} serve --config ${config}; echo EXIT=$?; sleep 60`, { cols: 250, rows: 60 })
    const screen = () => term.tmux('capture-pane', '-p', '-J', '-t', 'tty')
    await waitFor(() => screen().includes('serving'), 20_000, 'serve to be up')
    const text = screen()
    expect(text.match(/this is MCP on stdin and stdout/g)).toHaveLength(1)
    // The entry runs this very myc, with the config it was given.
    expect(text).toContain(`"mycelium": {"command":"${process.execPath}","args":["${bundle}","--config","${config}"]}`)
    expect(text).toContain('myc serve --http')
    term.tmux('send-keys', '-t', 'tty', 'C-c')
    await waitFor(() => screen().includes('EXIT='), 20_000, 'serve to stop')
  }, 60_000)

  it('with stdin a pipe (what a client gives it) and stderr the terminal: no such line', async () => {
    requireBundle()
    term.open('pipe', `echo | ${myc} serve --config ${config}; echo EXIT=$?; sleep 60`, { cols: 250, rows: 60 })
    const screen = () => term.tmux('capture-pane', '-p', '-J', '-t', 'pipe')
    await waitFor(() => screen().includes('EXIT='), 20_000, 'serve to end with its stdin')
    expect(screen()).toContain('serving')
    expect(screen()).not.toContain('this is MCP on stdin')
  }, 60_000)
})
