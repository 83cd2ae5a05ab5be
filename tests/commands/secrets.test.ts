import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { runHere } from '../helpers/cli.js'
import { writeConfig } from '../helpers/e2e.js'
import { fixtureServer } from '../helpers/fixtures.js'

const KEY = Buffer.alloc(32, 5).toString('base64')

/** A user config folder of the test's own, and the env that points myc at it (its key never the machine's). */
function home(): { env: Record<string, string>; store: (principal?: string) => SecretStore } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-secrets-cli-'))
  const env = { XDG_CONFIG_HOME: dir, MYC_TOKEN_KEY: KEY }
  return { env, store: (principal) => SecretStore.forUser(env, principal ? { principal } : {}) }
}

/**
 * `myc secrets set|list|rm [--principal P]`, run in this process: the value
 * from stdin (one trailing newline dropped), never from the command line;
 * names only in the list; one person's apart from another's. The prompt on
 * a terminal is tests/e2e/secrets-cli.test.ts's.
 */
describe('myc secrets', () => {
  it('refuses a value on the command line without repeating it, a bad name, and an empty value', async () => {
    const { env, store } = home()
    const inline = await runHere(['secrets', 'set', 'github', 'ghp_on-the-command-line'], '', { env })
    expect(inline.code).toBe(2)
    expect(inline.stderr).toMatch(/from stdin or a prompt, never from the command line/)
    expect(inline.stderr).not.toContain('ghp_on-the-command-line')
    const bad = await runHere(['secrets', 'set', '../github'], 'v', { env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/"\.\.\/github" is not a secret's name/)
    expect((await runHere(['secrets', 'set', 'github'], '\n', { env })).code).toBe(2)
    expect((await runHere(['secrets', 'set', 'github', '--principal', ''], 'v', { env })).code).toBe(2)
    // A JWT's person without a subject is no one.
    const subjectless = await runHere(['secrets', 'set', 'github', '--principal', 'jwt:'], 'v', { env })
    expect(subjectless.code).toBe(2)
    expect(subjectless.stderr).toMatch(/--principal takes a name: .*jwt:SUBJECT/)
    expect(await store().names()).toEqual([])
  })

  it('keeps a value from stdin (one trailing newline dropped), lists names only, per person, and forgets it', async () => {
    const { env, store } = home()
    const set = await runHere(['secrets', 'set', 'github', '--principal', 'alice'], 'ghp_alice-value\n\n', { env })
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).not.toContain('ghp_alice-value')
    expect(await store('alice').value('github')).toBe('ghp_alice-value\n')
    expect((await runHere(['secrets', 'set', 'api'], 'mine\r\n', { env })).code).toBe(0)
    expect(await store().value('api')).toBe('mine')
    // Sealed: the file holds neither value nor name.
    const file = readFileSync(store().file, 'utf8')
    expect(file).not.toMatch(/ghp_alice-value|mine|github|alice/)

    const listed = await runHere(['secrets', 'list', '--principal', 'alice', '--json'], '', { env })
    expect(JSON.parse(listed.stdout)).toMatchObject({ ok: true, principal: 'alice', names: ['github'] })
    expect(listed.stdout).not.toContain('ghp_alice-value')
    expect((await runHere(['secrets', 'list'], '', { env })).stdout.trim()).toBe('api')
    expect((await runHere(['secrets', 'list', '--principal', 'bob'], '', { env })).stdout.trim()).toBe(
      'no secrets for bob',
    )

    expect((await runHere(['secrets', 'rm', 'github', '--principal', 'alice'], '', { env })).code).toBe(0)
    expect(await store('alice').value('github')).toBeUndefined()
    const again = await runHere(['secrets', 'rm', 'github', '--principal', 'alice'], '', { env })
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/no secret "github" is kept for alice/)
  })

  it('runs a scoped server’s own process with the local person’s secret; myc status --json shows its scope', async () => {
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
    const missing = await runHere(['status', '--json', '--config', config], '', { env })
    expect(missing.code).toBe(3)
    const before = JSON.parse(missing.stdout) as {
      servers: Array<{ key: string; scope: string; state: string; error: string | null }>
    }
    expect(before.servers.find((s) => s.key === 'gh')).toMatchObject({ scope: 'principal', state: 'FAILED' })
    expect(before.servers.find((s) => s.key === 'gh')!.error).toMatch(
      /secret "github" of the person who runs myc.*run: myc secrets set github/,
    )
    expect(before.servers.find((s) => s.key === 'plain')).toMatchObject({ scope: 'shared', state: 'RUNNING' })
    expect((await runHere(['secrets', 'set', 'github'], 'operator-value', { env })).code).toBe(0)
    const after = await runHere(['status', '--json', '--config', config], '', { env })
    expect(after.code, after.stderr).toBe(0)
    expect(JSON.parse(after.stdout).servers[0]).toMatchObject({
      key: 'gh',
      scope: 'principal',
      state: 'RUNNING',
      tools: 10,
    })
    // Its own process's folders are gone once it stopped.
    expect(existsSync(path.join(path.dirname(config), '.mycelium', 'instances', 'gh'))).toBe(true)
    expect(readdirSync(path.join(path.dirname(config), '.mycelium', 'instances', 'gh'))).toEqual([])
  })
})
