import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { bundle, requireBundle } from '../helpers/e2e.js'
import { waitFor } from '../helpers/runtime.js'
import { Terminal } from '../helpers/terminal.js'
import { requireTool } from '../helpers/tools.js'

const KEY = Buffer.alloc(32, 5).toString('base64')
const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

/** A user config folder of the test's own, and the env that points myc at it (its key never the machine's). */
function home(): { env: Record<string, string>; store: (principal?: string) => SecretStore } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-secrets-cli-'))
  const env = { XDG_CONFIG_HOME: dir, MYC_TOKEN_KEY: KEY }
  return { env, store: (principal) => SecretStore.forUser(env, principal ? { principal } : {}) }
}

/**
 * `myc secrets set` on a real terminal (build/myc.cjs under tmux): it asks
 * for the value and shows none of it. The rest of `myc secrets` runs in
 * process: tests/commands/secrets.test.ts.
 */
describe('myc secrets on a terminal', () => {
  it.runIf(hasTmux)(
    'asks on a terminal for the value and shows none of it',
    async () => {
      requireBundle()
      const { env, store } = home()
      const term = new Terminal('secrets')
      const screen = () => term.tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'set')
      try {
        term.open(
          'set',
          `XDG_CONFIG_HOME='${env.XDG_CONFIG_HOME}' MYC_TOKEN_KEY='${KEY}' '${process.execPath}' '${bundle}' secrets set github --principal alice; echo EXIT=$?; sleep 60`,
        )
        await waitFor(() => screen().includes('value of secret "github" for alice'), 20_000, 'the prompt')
        term.tmux('send-keys', '-t', 'set', 'typed-secret-value', 'Enter')
        await waitFor(() => screen().includes('EXIT='), 20_000, 'myc secrets set to end')
        expect(screen()).toContain('EXIT=0')
        expect(screen()).not.toContain('typed-secret-value')
        expect(await store('alice').value('github')).toBe('typed-secret-value')
      } finally {
        term.close()
      }
    },
    60_000,
  )
})
