import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { stripAnsi } from '../../src/terminal-colour.js'
import { runHere } from '../helpers/cli.js'
import { fixtureServer } from '../helpers/fixtures.js'

/**
 * A usage error comes before any child starts, for every command that
 * starts children: its flags are checked against the config (the mode, the
 * roles, the skills, the budget) first. Each project's one server leaves
 * a mark as the first thing it does (a shell line, then the echo fixture):
 * after a usage error there is none. In process: the commands' own checks
 * are the point, not the bundle.
 */
function project(kind: 'open' | 'policy'): { config: string; mark: string } {
  const dir = mkdtempSync(path.join(tmpdir(), `myc-usage-${kind}-`))
  const mark = path.join(dir, 'started')
  if (kind === 'policy') {
    mkdirSync(path.join(dir, 'skills', 'adder'), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', 'adder', 'SKILL.md'),
      '---\nname: adder\ndescription: adds\nallowedRoles: [dev]\nallowedTools: ["echo:add"]\n---\n',
    )
  }
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    config,
    JSON.stringify({
      // sh leaves the mark within a millisecond of its start, long before myc could stop a child it had started.
      mcpServers: {
        echo: {
          command: 'sh',
          args: ['-c', `echo started >> '${mark}'; exec '${process.execPath}' '${fixtureServer('echo')}'`],
        },
      },
      agent: { price: { inputPerMTok: 3, outputPerMTok: 15 }, adhocRole: 'dev' },
      ...(kind === 'policy'
        ? { roles: { default: 'dev' }, http: { tokens: [{ env: 'MYC_USAGE_UNSET', role: 'dev' }] } }
        : {}),
    }),
  )
  return { config, mark }
}

const OPEN = /open mode|has no skills|needs policy mode/
const cases: Array<[string, 'open' | 'policy', string[], RegExp]> = [
  ['serve --role', 'open', ['serve', '--role', 'dev'], OPEN],
  ['serve --http --skills', 'open', ['serve', '--http', '127.0.0.1:0', '--skills', 'adder'], OPEN],
  ['tools --role', 'open', ['tools', '--role', 'dev'], OPEN],
  ['tokens --role', 'open', ['tokens', '--role', 'dev'], OPEN],
  ['roles', 'open', ['roles'], OPEN],
  ['skills list', 'open', ['skills', 'list'], OPEN],
  ['skills show', 'open', ['skills', 'show', 'adder'], OPEN],
  ['skills lint', 'open', ['skills', 'lint'], OPEN],
  ['policy check', 'open', ['policy', 'check', '--role', 'dev'], OPEN],
  ['explain', 'open', ['explain', 'echo:add', '--role', 'dev'], OPEN],
  ['preview skill', 'open', ['preview', 'skill', 'adder', '--role', 'dev'], OPEN],
  ['run --role', 'open', ['run', 'a task', '--role', 'dev'], OPEN],
  ['adhoc', 'open', ['adhoc', 'a task'], OPEN],
  ['workflow', 'open', ['workflow', 'a task'], OPEN],
  ['chat --role', 'open', ['chat', '--role', 'dev'], OPEN],
  ['run --max-budget-usd too small', 'open', ['run', 'a task', '--max-budget-usd', '0.0001'], /no request fits/],
  ['serve --role unknown', 'policy', ['serve', '--role', 'nope'], /unknown role "nope"/],
  [
    'serve --skills unreachable',
    'policy',
    ['serve', '--skills', 'nope'],
    /--skills: role "dev" cannot use skill "nope"/,
  ],
  ['serve --http, a token variable unset', 'policy', ['serve', '--http', '127.0.0.1:0'], /MYC_USAGE_UNSET is not set/],
  ['tools --role unknown', 'policy', ['tools', '--role', 'nope'], /unknown role "nope"/],
  ['tools --skills unreachable', 'policy', ['tools', '--skills', 'nope'], /cannot use skill "nope"/],
  ['tokens --role unknown', 'policy', ['tokens', '--role', 'nope'], /no role "nope"/],
  ['policy check --role unknown', 'policy', ['policy', 'check', '--role', 'nope'], /unknown role "nope"/],
  ['explain --role unknown', 'policy', ['explain', 'echo:add', '--role', 'nope'], /unknown role "nope"/],
  ['preview skill --role unknown', 'policy', ['preview', 'skill', 'adder', '--role', 'nope'], /unknown role "nope"/],
  ['run --role unknown', 'policy', ['run', 'a task', '--role', 'nope'], /unknown role "nope"/],
  ['adhoc --skills unreachable', 'policy', ['adhoc', 'a task', '--skills', 'nope'], /cannot use skill "nope"/],
  ['workflow --role unknown', 'policy', ['workflow', 'a task', '--role', 'nope'], /unknown role "nope"/],
  ['chat --role unknown', 'policy', ['chat', '--role', 'nope'], /unknown role "nope"/],
  ['adhoc --approve a typo', 'policy', ['adhoc', 'a task', '--approve', 'echo:'], /--approve takes a risk level/],
  ['chat --approve a typo', 'policy', ['chat', '--approve', 'echo:'], /--approve takes a risk level/],
]

describe('usage errors before any child starts (in process)', () => {
  // The agent's commands need a key to get as far as their checks; the API is never reached.
  const env = {
    ANTHROPIC_API_KEY: 'sk-test',
    ANTHROPIC_AUTH_TOKEN: undefined,
    ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    MYCELIUM_ROLE: undefined,
    MYC_USAGE_UNSET: undefined,
  }

  it('the mark works: a command that starts the children leaves one', async () => {
    const { config, mark } = project('open')
    const r = await runHere(['status', '--json', '--config', config], '', { env })
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync(mark)).toBe(true)
    rmSync(mark)
  })

  it.each(cases)('myc %s: exit 2, the reason, and no child started', async (_name, kind, args, reason) => {
    const { config, mark } = project(kind)
    const r = await runHere([...args, '--config', config], '', { env })
    const stderr = stripAnsi(r.stderr)
    expect(r.code, stderr).toBe(2)
    expect(stderr).toMatch(/^myc: /)
    expect(stderr).toMatch(reason)
    expect(existsSync(mark), `${args.join(' ')} started a child`).toBe(false)
  })
})
