import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseConfig, type LoadedConfig } from '../../src/config/load.js'
import { MycError } from '../../src/errors.js'
import { checkPrincipals, launchPrincipal } from '../../src/http/principals.js'
import { readTokens } from '../../src/http/bearer-tokens.js'
import { createLogger } from '../../src/logger.js'
import { loadPolicyMode } from '../../src/principal/policy-mode.js'
import { repoRoot } from '../helpers/fixtures.js'

const env = { TOKEN_A: 'a-long-random-token-for-alice', TOKEN_B: 'b-long-random-token-for-bob' }

/** A config's http.tokens through the real parser, in `dir` (the repo, which has skills: policy mode; a new folder: open mode). */
async function setUp(tokens: unknown[], dir: string) {
  const file = path.join(dir, 'mycelium.config.json')
  const { config, secrets } = parseConfig({ http: { tokens } }, { file, env })
  const loaded: LoadedConfig = { file, dir, config, secrets }
  const mode = await loadPolicyMode(loaded, { toolNamesOf: () => undefined }, createLogger({ quiet: true }))
  return { loaded, mode, tokens: readTokens(config.http.tokens, env, file) }
}

/** checkPrincipals' config error, or what it said in passing. */
async function check(tokens: unknown[], dir: string): Promise<{ error?: string; notices: string[] }> {
  const { loaded, mode, tokens: read } = await setUp(tokens, dir)
  const notices: string[] = []
  try {
    checkPrincipals(mode, loaded, read, launchPrincipal(undefined, undefined), {}, false, (m) => notices.push(m))
    return { notices }
  } catch (error) {
    expect(error).toBeInstanceOf(MycError)
    expect((error as MycError).code).toBe('config_invalid')
    return { error: (error as MycError).message, notices }
  }
}

describe('an HTTP token’s role: needed in policy mode, meaningless in open mode', () => {
  const open = () => mkdtempSync(path.join(tmpdir(), 'myc-open-tokens-'))

  it('open mode: a token needs no role, and is served as every other', async () => {
    const { mode, tokens } = await setUp([{ env: 'TOKEN_A', name: 'alice' }], open())
    expect(mode.kind).toBe('open')
    expect(tokens[0]).toMatchObject({ label: 'alice', skills: [] })
    expect(tokens[0]!.role).toBeUndefined()
    expect(await check([{ env: 'TOKEN_A' }, { env: 'TOKEN_B' }], open())).toEqual({ notices: [] })
  })

  it('open mode: a role or skills given are said to mean nothing, not refused', async () => {
    const { error, notices } = await check(
      [
        { env: 'TOKEN_A', role: 'made-up', name: 'alice' },
        { env: 'TOKEN_B', skills: ['reader'] },
      ],
      open(),
    )
    expect(error).toBeUndefined()
    expect(notices).toEqual([
      expect.stringMatching(/^http\.tokens\[0\] \(alice\): role "made-up" means nothing in open mode .*has no skills/),
      expect.stringMatching(/^http\.tokens\[1\] \(tokens\[1\]\): skills mean nothing in open mode/),
    ])
  })

  it('policy mode: a made-up role is refused, with the list of roles', async () => {
    const { error } = await check([{ env: 'TOKEN_A', role: 'root' }], repoRoot)
    expect(error).toMatch(/http\.tokens\[0\]\.role: unknown role "root"; roles: .*\bdeveloper\b.*\bguest\b/)
  })

  it('policy mode: a token without a role is refused, with the list of roles', async () => {
    const { error } = await check([{ env: 'TOKEN_A', role: 'guest' }, { env: 'TOKEN_B' }], repoRoot)
    expect(error).toMatch(
      /http\.tokens\[1\]\.role: missing; in policy mode each token names the role its sessions get; roles: .*\bdeveloper\b/,
    )
    expect(error).not.toContain('tokens[0]')
  })
})
