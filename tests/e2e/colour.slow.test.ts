import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { bundle, requireBundle } from '../helpers/e2e.js'

/**
 * The environment of a person's shell: vitest sets TEST and NODE_ENV=test (and CI may be set),
 * which make citty and consola drop colour on their own, so they go; a real TERM stays.
 */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color' }
  for (const name of [
    'TEST',
    'VITEST',
    'CI',
    'GITHUB_ACTIONS',
    'GITLAB_CI',
    'CIRCLECI',
    'NO_COLOR',
    'FORCE_COLOR',
    'NODE_DISABLE_COLORS',
    'NODE_ENV',
    'MODE',
    'PROD',
    'DEV',
  ])
    delete env[name]
  return { ...env, ...extra }
}

/** Runs the bundle with stdout and stderr both pipes. */
function myc(args: string[], env: NodeJS.ProcessEnv = shellEnv()) {
  requireBundle()
  const r = spawnSync(process.execPath, [bundle, ...args], { encoding: 'utf8', input: '', env, timeout: 60_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const ESC = '\u001b['
const runs: Array<[string, string[]]> = [
  ['myc --help', ['--help']],
  ['myc skills --help', ['skills', '--help']],
  ['myc skills lint --help', ['skills', 'lint', '--help']],
  ['myc tools --config /nonexistent.json', ['tools', '--config', '/nonexistent.json']],
]

describe('colour only on a terminal (build/myc.cjs through pipes)', () => {
  it.each(runs)('%s writes no escape codes to a pipe', (_name, args) => {
    const { stdout, stderr } = myc(args)
    expect(stdout + stderr).not.toBe('')
    expect(stdout).not.toContain(ESC)
    expect(stderr).not.toContain(ESC)
  })

  it('the error of a missing config reaches stderr, plain', () => {
    const { code, stderr } = myc(['tools', '--config', '/nonexistent.json'])
    expect(code).toBe(2)
    // One line in myc's one error style (docs/development.md), no badge, no blank lines.
    expect(stderr).toBe(
      'myc: Config file not found: /nonexistent.json (named by --config) (fix: check the path, or run `myc init` to create one)\n',
    )
  })

  it('FORCE_COLOR=1 colours the usage and the logs even in a pipe', () => {
    const help = myc(['--help'], shellEnv({ FORCE_COLOR: '1' }))
    expect(help.stdout).toContain(ESC)
    expect(help.stdout).toMatch(/USAGE/)
    const nested = myc(['skills', '--help'], shellEnv({ FORCE_COLOR: '1' }))
    expect(nested.stdout).toContain(ESC)
    const error = myc(['tools', '--config', '/nonexistent.json'], shellEnv({ FORCE_COLOR: '1' }))
    expect(error.stderr).toContain(ESC)
  })

  it.each([
    ['NO_COLOR=1 beats FORCE_COLOR=1', { NO_COLOR: '1', FORCE_COLOR: '1' }],
    ['FORCE_COLOR=0', { FORCE_COLOR: '0' }],
    ['CI with GITHUB_ACTIONS', { CI: 'true', GITHUB_ACTIONS: 'true' }],
  ])('%s: no escape codes on stdout or stderr', (_name, extra) => {
    for (const [, args] of runs) {
      const { stdout, stderr } = myc(args, shellEnv(extra))
      expect(stdout).not.toContain(ESC)
      expect(stderr).not.toContain(ESC)
    }
  })

  // A terminal on stdout, a file for stderr (`myc tools 2>log`): consola on its
  // own would colour stderr because stdout is a terminal.
  const hasScript =
    process.platform === 'linux' && spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0
  it.skipIf(!hasScript)('a terminal on stdout does not colour a piped stderr, and the terminal gets colour', () => {
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(bundle)} tools --config /nonexistent.json; ${JSON.stringify(process.execPath)} ${JSON.stringify(bundle)} --help`
    const r = spawnSync('script', ['-qec', command, '/dev/null'], {
      encoding: 'utf8',
      env: shellEnv(),
      timeout: 60_000,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    // Under script(1) both streams are the terminal, so both carry colour: the terminal case.
    expect(r.stdout).toMatch(/Config file not found/)
    expect(r.stdout).toContain(ESC)
    const split = spawnSync(
      'script',
      [
        '-qec',
        `${JSON.stringify(process.execPath)} ${JSON.stringify(bundle)} tools --config /nonexistent.json 2>&3`,
        '/dev/null',
      ],
      {
        encoding: 'utf8',
        env: shellEnv(),
        timeout: 60_000,
        stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      },
    )
    const stderr = String(split.output[3] ?? '')
    expect(stderr).toMatch(/Config file not found/)
    expect(stderr).not.toContain(ESC)
  })
})
