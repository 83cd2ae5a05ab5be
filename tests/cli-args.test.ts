import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { ArgsDef, CommandDef } from 'citty'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { argsOf, checkWords, loadSubCommand, nearest, subCommandsOf } from '../src/cli-args.js'
import { mycCommand } from '../src/cli.js'
import { argRule } from '../src/commands/_shared.js'
import { stripAnsi } from '../src/terminal-colour.js'
import { runHere, type HereRun } from './helpers/cli.js'
import { FakeAnthropic } from './helpers/fake-anthropic.js'

/** Runs `myc argv` in this process (stdin a pipe unless `tty`), with what it writes. */
const cli = (argv: string[], options: { tty?: boolean; env?: Record<string, string> } = {}): Promise<HereRun> =>
  runHere(argv, '', options)

interface Node {
  /** The words that name it (`['skills', 'lint']`; `[]` is myc itself). */
  path: string[]
  cmd: CommandDef<any>
  args: ArgsDef
  /** Whether it runs (no subcommands). */
  leaf: boolean
}

/** Every command and subcommand of myc, from citty's command tree (the lazy ones loaded). */
async function walk(cmd: CommandDef<any> = mycCommand, at: string[] = []): Promise<Node[]> {
  const subs = await subCommandsOf(cmd)
  const nodes: Node[] = [{ path: at, cmd, args: await argsOf(cmd), leaf: subs === undefined }]
  for (const name of Object.keys(subs ?? {}))
    nodes.push(...(await walk(await loadSubCommand(subs!, name), [...at, name])))
  return nodes
}

const globals = await argsOf(mycCommand)
const tree = await walk()
const commands = tree.filter((n) => n.path.length > 0)
const leaves = commands.filter((n) => n.leaf)
const emptyConfig = (): string => {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-cli-args-')), 'mycelium.config.json')
  writeFileSync(file, JSON.stringify({ mcpServers: {} }))
  return file
}

describe('the command tree', () => {
  it('has the commands and nested subcommands the walk relies on', () => {
    const names = commands.map((n) => n.path.join(' '))
    expect(names).toEqual(
      expect.arrayContaining([
        'status',
        'tools',
        'run',
        'sandbox exec',
        'sandbox guard',
        'skills lint',
        'memory show',
        'sessions export',
      ]),
    )
    expect(leaves.length).toBeGreaterThan(25)
  })
})

describe('usage text', () => {
  it.each(tree.map((n) => [n.path.join(' ') || '(myc)', n] as const))(
    'myc %s --help stays within 100 columns, and no line ends in padding',
    async (_, node) => {
      const { code, stdout } = await cli([...node.path, '--help'])
      expect(code).toBe(0)
      expect(stdout.length).toBeGreaterThan(0)
      for (const line of stdout.split('\n')) {
        expect(line.length, line).toBeLessThanOrEqual(100)
        expect(line).toBe(line.trimEnd())
      }
    },
  )
})

/** A command line's words as a POSIX shell splits them (single and double quotes; no expansion). */
function shellWords(line: string): string[] {
  const words: string[] = []
  for (const m of line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]!)
  return words
}

/** Checks one `myc …` command line of an example as myc would read it, without running it; throws what myc would say. */
function checkExample(line: string): void {
  const words = shellWords(line)
  expect(words[0], line).toBe('myc')
  const rest = words.slice(1)
  if (rest[0] === 'help') {
    expect(
      tree.map((n) => n.path.join(' ')),
      line,
    ).toContain(rest.slice(1).join(' '))
    return
  }
  // The deepest command its leading words name; with none, what a pipe on stdin runs (serve).
  const node =
    tree
      .filter((n) => n.path.length > 0 && n.path.every((w, i) => rest[i] === w))
      .sort((a, b) => b.path.length - a.path.length)[0] ?? commands.find((n) => n.path.join(' ') === 'serve')!
  const own = rest.slice(node.path[0] === rest[0] ? node.path.length : 0)
  expect(node.leaf || Object.hasOwn(node.cmd, 'default'), `${line}: names a group without a default`).toBe(true)
  checkWords(own, { path: node.path.join(' '), args: node.args, globals })
}

describe('every command’s --help has an EXAMPLES section: two or three command lines myc accepts', () => {
  it.each(tree.map((n) => [n.path.join(' ') || '(myc)', n] as const))('myc %s --help', async (_, node) => {
    const { code, stdout } = await cli([...node.path, '--help'])
    expect(code).toBe(0)
    const text = stripAnsi(stdout)
    const at = text.indexOf('\nEXAMPLES\n')
    expect(at, text).toBeGreaterThan(0)
    const section = text.slice(at)
    const runs = [...section.matchAll(/^ {2}(myc\b.*)$/gm)].map((m) => m[1]!)
    const comments = [...section.matchAll(/^ {2}# \S.*$/gm)]
    expect(runs.length).toBeGreaterThanOrEqual(2)
    expect(runs.length).toBeLessThanOrEqual(3)
    expect(comments).toHaveLength(runs.length)
    for (const run of runs) for (const part of run.split(' && ')) checkExample(part)
  })

  it('examples name only commands there are', async () => {
    const { EXAMPLES } = await import('../src/commands/_examples.js')
    const paths = tree.map((n) => n.path.join(' '))
    for (const key of EXAMPLES.keys()) expect(paths).toContain(key)
  })

  it('a typo in an example would be caught', () => {
    expect(() => checkExample('myc tools --rol developer')).toThrow('unknown flag --rol for myc tools')
    expect(() => checkExample('myc sessions show')).toThrow('needs ID')
  })
})

describe('every command refuses an unknown flag (exit 2, naming it), from the command tree', () => {
  it.each(tree.map((n) => [n.path.join(' ') || '(none: serve)', n] as const))(
    'myc %s --bogus-flag',
    async (_, node) => {
      const after = await cli([...node.path, '--bogus-flag'])
      expect(after.code).toBe(2)
      // One line, in the one error style of every command (docs/development.md): `myc: …`, no badge, no blank lines.
      expect(stripAnsi(after.stderr)).toMatch(
        new RegExp(`^myc: unknown flag --bogus-flag for myc ${node.path.join(' ') || 'serve'}\\b[^\\n]*\\n$`),
      )
      // Before the command too.
      const before = await cli(['--bogus-flag', ...node.path])
      expect(before.code).toBe(2)
      expect(before.stderr).toContain('unknown flag --bogus-flag')
    },
  )

  it.each(leaves.filter((n) => Object.hasOwn(n.args, 'json')).map((n) => [n.path.join(' '), n] as const))(
    'myc %s --json --bogus-flag prints the JSON error document',
    async (_, node) => {
      const { code, stdout, stderr } = await cli([...node.path, '--json', '--bogus-flag'])
      expect(code).toBe(2)
      // And one human line on stderr, --json or not.
      expect(stderr).toContain('unknown flag --bogus-flag')
      if (['run', 'workflow', 'adhoc'].includes(node.path.join(' '))) {
        // The agent's commands print their event stream: an error event, then session_end.
        const events = stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
        expect(events.map((e) => e.type)).toEqual(['error', 'session_end'])
        expect(events[0]).toMatchObject({
          code: 'usage',
          message: expect.stringContaining('unknown flag --bogus-flag'),
        })
        expect(events[1]).toMatchObject({ ok: false, reason: 'error', exitCode: 2 })
        return
      }
      const doc = JSON.parse(stdout)
      expect(doc).toMatchObject({ ok: false, error: { code: 'usage' } })
      expect(doc.error.message).toContain('unknown flag --bogus-flag')
    },
  )

  it('a --json error carries the fix apart when there is one', async () => {
    const { code, stdout, stderr } = await cli(['status', '--json', '--config', '/nonexistent/mycelium.config.json'])
    expect(code).toBe(2)
    expect(JSON.parse(stdout)).toEqual({
      ok: false,
      error: {
        code: 'config_not_found',
        message: 'Config file not found: /nonexistent/mycelium.config.json (named by --config)',
        fix: 'check the path, or run `myc init` to create one',
      },
    })
    expect(stderr).toMatch(/Config file not found: .*\(fix: check the path/)
  })

  it('myc run --max-turns 0 --json prints the event stream, ending in session_end (exit 2)', async () => {
    const { code, stdout } = await cli(['run', 'x', '--max-turns', '0', '--json'])
    expect(code).toBe(2)
    const events = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(events.at(-1)).toMatchObject({ type: 'session_end', ok: false, exitCode: 2 })
    expect(events.find((e) => e.type === 'error')).toMatchObject({
      code: 'usage',
      message: expect.stringMatching(/--max-turns/),
    })
  })
})

describe('every flag of every command is read as its definition says', () => {
  it.each(leaves.map((n) => [n.path.join(' '), n] as const))('myc %s', (where, node) => {
    const command = { path: where, args: node.args, globals }
    // What the command cannot run without (`policy check --role R`, `sessions show ID`), given first each time.
    const needed = [
      ...requiredWords(node.args).positionals,
      ...requiredWords(node.args).flags.flatMap((name) => [`--${name}`, 'r']),
    ]
    const check = (words: string[]) => checkWords([...needed, ...words], command)
    for (const [name, def] of Object.entries({ ...globals, ...node.args })) {
      if (def.type === 'positional') continue
      const defined = Object.hasOwn(node.args, name)
      if (def.type === 'boolean') {
        for (const word of [`--${name}`, `--no-${name}`, `--${name}=false`])
          expect(check([word])).toEqual([...needed, ...(defined ? [word] : [])])
        expect(() => check([`--${name}=maybe`])).toThrow(`--${name} takes no value`)
        continue
      }
      expect(check([`--${name}`, 'v'])).toEqual([...needed, ...(defined ? [`--${name}`, 'v'] : [])])
      expect(check([`--${name}=v`])).toEqual([...needed, ...(defined ? [`--${name}=v`] : [])])
      expect(() => check([`--no-${name}`])).toThrow(`unknown flag --no-${name}`)
      if (argRule(def).optionalValue) expect(check([`--${name}`])).toEqual([...needed, `--${name}=`])
      else expect(() => check([`--${name}`])).toThrow(`--${name} needs a value for myc ${where}`)
    }
    // Its declared positionals, and one more only when one takes the rest.
    const positionals = Object.values(node.args).filter((d) => d.type === 'positional')
    const words = [
      ...positionals.map((_, i) => `p${i}`),
      ...requiredWords(node.args).flags.flatMap((n) => [`--${n}`, 'r']),
    ]
    expect(checkWords(words, command)).toEqual(words)
    if (positionals.some((d) => argRule(d).rest))
      expect(checkWords([...words, 'more'], command)).toEqual([...words, 'more'])
    else expect(() => checkWords([...words, 'more'], command)).toThrow(`unexpected argument "more" for myc ${where}`)
  })
})

/** The positionals a command cannot run without (as words `p0`, `p1`…) and the names of its required flags. */
function requiredWords(args: ArgsDef): { positionals: string[]; flags: string[] } {
  const entries = Object.entries(args)
  const positionals = entries.filter(([, d]) => d.type === 'positional')
  const lastRequired = positionals.findLastIndex(([, d]) => d.required !== false && d.default === undefined)
  return {
    positionals: positionals.slice(0, lastRequired + 1).map((_, i) => `p${i}`),
    flags: entries
      .filter(([, d]) => d.type !== 'positional' && d.required === true && d.default === undefined)
      .map(([n]) => n),
  }
}

describe('a command run without what it needs says what is missing and where to find it (in process)', () => {
  const needing = leaves.filter((n) => {
    const r = requiredWords(n.args)
    return r.positionals.length + r.flags.length > 0
  })

  it('is found in the tree (sessions show, policy check, explain, …)', () => {
    expect(needing.map((n) => n.path.join(' '))).toEqual(
      expect.arrayContaining(['sessions show', 'sessions export', 'policy check', 'explain', 'memory show']),
    )
  })

  it.each(needing.map((n) => [n.path.join(' '), n] as const))('myc %s', async (where, node) => {
    const { code, stderr } = await cli(node.path)
    expect(code).toBe(2)
    const first = requiredWords(node.args).positionals.length > 0
    const word = first
      ? Object.entries(node.args)
          .find(([, d]) => d.type === 'positional')![0]
          .toUpperCase()
      : `--${requiredWords(node.args).flags[0]}`
    expect(stripAnsi(stderr)).toMatch(
      new RegExp(`^myc: \`myc ${where}\` needs ${word}[ :][^\\n]*; see \`myc ${where} --help\`\\n$`),
    )
  })

  it('myc sessions show: the id, and the command that lists them', async () => {
    const { stderr } = await cli(['sessions', 'show'])
    expect(stripAnsi(stderr)).toBe(
      'myc: `myc sessions show` needs ID: Session id or saved name (`myc sessions list` shows them); see `myc sessions show --help`\n',
    )
  })
})

describe('typed-wrong command lines are usage errors (in process)', () => {
  it.each([
    [['status', '--jsno'], 'unknown flag --jsno for myc status (did you mean --json?)'],
    [['tools', '--rol', 'guest'], 'unknown flag --rol for myc tools (did you mean --role?)'],
    [['tools', '--role'], '--role needs a value for myc tools'],
    [['tools', '--role', '--all'], '--role needs a value for myc tools'],
    [['status', 'extra-arg'], 'unexpected argument "extra-arg" for myc status'],
    [['adhoc', 'x', '--aprove', 'critical'], 'unknown flag --aprove for myc adhoc (did you mean --approve?)'],
    [['explain', 'a:b', 'c:d'], 'unexpected argument "c:d" for myc explain'],
    [['init', 'dir', 'other'], 'unexpected argument "other" for myc init'],
    [
      ['run', 'fix', 'the', 'bug'],
      'unexpected argument "the" for myc run (it takes TASK; quote an argument that has spaces)',
    ],
    [['status', 'json'], 'did you mean --json?'],
    [['status', '-v'], 'unknown flag -v for myc status (did you mean --verbose?)'],
    [['status', '--json=yes'], '--json takes no value'],
    [['tools', '--no-role'], 'unknown flag --no-role for myc tools'],
    [['statsu'], 'Unknown command "statsu" (did you mean status?)'],
    [['skills', 'lnt'], 'Unknown command "skills lnt" (did you mean skills lint?)'],
    [['memory'], '`myc memory` needs a subcommand'],
    [['--config', 'F', '--role', 'guest', '--jsno'], 'unknown flag --jsno for myc serve'],
    [['--config', 'F', '--role'], '--role needs a value for myc serve'],
    [['--role', 'guest', 'status'], 'unknown flag --role for myc status'],
    [['--config', 'F', '--sklls', 'a'], 'unknown flag --sklls for myc serve (did you mean --skills?)'],
    [['--json', 'statsu'], 'Unknown command "statsu" (did you mean status?)'],
    [['memory', '--jsno'], 'unknown flag --jsno for myc memory'],
    [['sandbox', 'exec', '--trust'], '--trust needs a value for myc sandbox exec'],
    [['sessions', 'export', 'id', '--format'], '--format needs a value for myc sessions export'],
  ])('myc %j', async (argv, message) => {
    const { code, stdout, stderr } = await cli(argv)
    expect(code).toBe(2)
    // On stderr; with --json before an unknown command, in the JSON error document on stdout.
    expect(argv.includes('--json') ? JSON.parse(stdout).error.message : stderr).toContain(message)
  })

  it('on a terminal, myc with no command is chat, and takes its flags', async () => {
    const { code, stderr } = await cli(['--config', 'F', '--stdio'], { tty: true })
    expect(code).toBe(2)
    expect(stderr).toContain('unknown flag --stdio for myc chat')
  })

  describe('myc run x --bogus-flag', () => {
    const fake = new FakeAnthropic([{ content: [{ type: 'text', text: 'done' }] }])
    beforeAll(async () => {
      await fake.start()
    })
    afterAll(async () => {
      await fake.close()
    })

    it('exits 2 before contacting the API', async () => {
      const { code, stderr } = await cli(['run', 'x', '--bogus-flag', '--config', emptyConfig()], {
        env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-test' },
      })
      expect(code).toBe(2)
      expect(stderr).toContain('unknown flag --bogus-flag for myc run')
      expect(fake.requests).toHaveLength(0)
    })
  })
})

describe('valid command lines (in process)', () => {
  it('myc --era modern status: a global flag before the command', async () => {
    const config = emptyConfig()
    for (const argv of [
      ['--era', 'modern', 'status', '--json', '--config', config],
      ['status', '--era', 'modern', '--json', '--config', config],
      ['--config', config, '--json', 'status'],
    ]) {
      const { code, stdout } = await cli(argv)
      expect(code).toBe(0)
      expect(JSON.parse(stdout)).toMatchObject({ ok: true, servers: [] })
    }
  })

  it('--no-json, --json=false and --config=F forms', async () => {
    const config = emptyConfig()
    for (const argv of [
      ['status', '--no-json', `--config=${config}`],
      ['status', '--json=false', '--config', config],
    ]) {
      const { code, stdout } = await cli(argv)
      expect(code).toBe(0)
      expect(stdout).toContain('no servers configured')
    }
  })

  it('words after -- belong to the command myc runs: never read as flags', async () => {
    const { code, stdout } = await cli(['sandbox', 'guard', '--json', '--', 'ls', '--bogus-flag', '--help'])
    expect(code).toBe(0)
    expect(JSON.parse(stdout)).toMatchObject({ ok: true })
  })

  it('--help wins over a wrong flag, and shows the deepest command named', async () => {
    const { code, stdout } = await cli(['skills', 'lint', '--jsno', '--help'])
    expect(code).toBe(0)
    expect(stdout).toContain('myc skills lint')
  })
})

describe('checkWords', () => {
  const serveLike: ArgsDef = { ...globals, http: { type: 'string' }, stdio: { type: 'boolean' } }
  const status = { path: 'status', args: { config: { type: 'string' }, json: { type: 'boolean' } } as ArgsDef, globals }

  it('leaves out global flags the command does not define, with their values', () => {
    expect(checkWords(['--era', 'modern', '--json', '--verbose', '--config', 'F'], status)).toEqual([
      '--json',
      '--config',
      'F',
    ])
    expect(checkWords(['--era=modern', '--no-verbose'], status)).toEqual([])
  })

  it('a value may be - or a negative number; not a flag, nor --', () => {
    const run = {
      path: 'run',
      args: { task: { type: 'positional', required: false }, 'max-turns': { type: 'string' } } as ArgsDef,
      globals,
    }
    expect(checkWords(['-', '--max-turns', '-1'], run)).toEqual(['-', '--max-turns', '-1'])
    expect(() => checkWords(['--max-turns', '--', 'x'], run)).toThrow('--max-turns needs a value')
    expect(checkWords(['--', '--not-a-flag'], run)).toEqual(['--', '--not-a-flag'])
    expect(() => checkWords(['x', '--', 'y'], run)).toThrow('unexpected argument "y"')
  })

  it('a flag whose value may be left out is written --flag= for citty', async () => {
    const { optionalValue } = await import('../src/commands/_shared.js')
    const serve = { path: 'serve', args: { ...serveLike, http: optionalValue({ type: 'string' }) } as ArgsDef, globals }
    expect(checkWords(['--http'], serve)).toEqual(['--http='])
    expect(checkWords(['--http', '--stdio'], serve)).toEqual(['--http=', '--stdio'])
    expect(checkWords(['--http', '8080'], serve)).toEqual(['--http', '8080'])
  })

  it('nearest: typos, swaps and prefixes; nothing for a word far from all', () => {
    expect(nearest('jsno', ['json', 'config'])).toBe('json')
    expect(nearest('aprove', ['approve', 'context'])).toBe('approve')
    expect(nearest('verb', ['verbose', 'config'])).toBe('verbose')
    expect(nearest('bogus-flag', ['json', 'config', 'verbose', 'era'])).toBeUndefined()
  })
})
