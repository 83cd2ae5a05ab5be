import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { bundle, requireBundle, runMyc, writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'
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
 * `myc secrets set|list|rm [--principal P]` (build/myc.cjs): the value from
 * stdin (one trailing newline dropped) or a prompt that shows nothing, never
 * from the command line; names only in the list; one person's apart from
 * another's.
 */
describe('myc secrets', () => {
  it('refuses a value on the command line without repeating it, a bad name, and an empty value', () => {
    const { env, store } = home()
    const inline = runMyc(['secrets', 'set', 'github', 'ghp_on-the-command-line'], '', { env })
    expect(inline.code).toBe(2)
    expect(inline.stderr).toMatch(/from stdin or a prompt, never from the command line/)
    expect(inline.stderr).not.toContain('ghp_on-the-command-line')
    const bad = runMyc(['secrets', 'set', '../github'], 'v', { env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/"\.\.\/github" is not a secret's name/)
    expect(runMyc(['secrets', 'set', 'github'], '\n', { env }).code).toBe(2)
    expect(runMyc(['secrets', 'set', 'github', '--principal', ''], 'v', { env }).code).toBe(2)
    // A JWT's person without a subject is no one.
    const subjectless = runMyc(['secrets', 'set', 'github', '--principal', 'jwt:'], 'v', { env })
    expect(subjectless.code).toBe(2)
    expect(subjectless.stderr).toMatch(/--principal takes a name: .*jwt:SUBJECT/)
    return expect(store().names()).resolves.toEqual([])
  })

  it('keeps a value from stdin (one trailing newline dropped), lists names only, per person, and forgets it', async () => {
    const { env, store } = home()
    const set = runMyc(['secrets', 'set', 'github', '--principal', 'alice'], 'ghp_alice-value\n\n', { env })
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).not.toContain('ghp_alice-value')
    expect(await store('alice').value('github')).toBe('ghp_alice-value\n')
    expect(runMyc(['secrets', 'set', 'api'], 'mine\r\n', { env }).code).toBe(0)
    expect(await store().value('api')).toBe('mine')
    // Sealed: the file holds neither value nor name.
    const file = readFileSync(store().file, 'utf8')
    expect(file).not.toMatch(/ghp_alice-value|mine|github|alice/)

    const listed = runMyc(['secrets', 'list', '--principal', 'alice', '--json'], '', { env })
    expect(JSON.parse(listed.stdout)).toMatchObject({ ok: true, principal: 'alice', names: ['github'] })
    expect(listed.stdout).not.toContain('ghp_alice-value')
    expect(runMyc(['secrets', 'list'], '', { env }).stdout.trim()).toBe('api')
    expect(runMyc(['secrets', 'list', '--principal', 'bob'], '', { env }).stdout.trim()).toBe('no secrets for bob')

    expect(runMyc(['secrets', 'rm', 'github', '--principal', 'alice'], '', { env }).code).toBe(0)
    expect(await store('alice').value('github')).toBeUndefined()
    const again = runMyc(['secrets', 'rm', 'github', '--principal', 'alice'], '', { env })
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/no secret "github" is kept for alice/)
  })

  it('runs a scoped server’s own process with the local person’s secret; myc status --json shows its scope', () => {
    const { env } = home()
    const config = writeConfig({
      mcpServers: {
        gh: {
          command: process.execPath,
          args: [fixtureServer('per-person')],
          scope: 'principal',
          env: { GITHUB_TOKEN: { secret: 'github' } },
        },
        plain: { command: process.execPath, args: [fixtureServer('echo')] },
      },
    })
    const missing = runMyc(['status', '--json', '--config', config], '', { env })
    expect(missing.code).toBe(3)
    const before = JSON.parse(missing.stdout) as {
      servers: Array<{ key: string; scope: string; state: string; error: string | null }>
    }
    expect(before.servers.find((s) => s.key === 'gh')).toMatchObject({ scope: 'principal', state: 'FAILED' })
    expect(before.servers.find((s) => s.key === 'gh')!.error).toMatch(
      /secret "github" of the person who runs myc.*run: myc secrets set github/,
    )
    expect(before.servers.find((s) => s.key === 'plain')).toMatchObject({ scope: 'shared', state: 'RUNNING' })
    expect(runMyc(['secrets', 'set', 'github'], 'operator-value', { env }).code).toBe(0)
    const after = runMyc(['status', '--json', '--config', config], '', { env })
    expect(after.code, after.stderr).toBe(0)
    expect(JSON.parse(after.stdout).servers[0]).toMatchObject({
      key: 'gh',
      scope: 'principal',
      state: 'RUNNING',
      tools: 8,
    })
    // Its own process's folders are gone once it stopped.
    expect(existsSync(path.join(path.dirname(config), '.mycelium', 'instances', 'gh'))).toBe(true)
    expect(readdirSync(path.join(path.dirname(config), '.mycelium', 'instances', 'gh'))).toEqual([])
  })

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
