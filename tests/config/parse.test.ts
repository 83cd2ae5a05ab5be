import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/config/parse.js'
import { MycError } from '../../src/errors.js'

const file = '/cfg/mycelium.config.json'
const env = { HOME: '/home/u', TOKEN: 'tok-123456', EMPTY: '' }

function problems(raw: unknown, over: Partial<{ file: string; env: Record<string, string | undefined> }> = {}): string {
  try {
    parseConfig(raw, { file: over.file ?? file, env: over.env ?? env })
  } catch (error) {
    expect(error).toBeInstanceOf(MycError)
    expect((error as MycError).code).toBe('config_invalid')
    expect((error as MycError).exitCode).toBe(2)
    return (error as Error).message
  }
  throw new Error('expected the config to be rejected')
}

const stdio = (extra: Record<string, unknown> = {}) => ({ mcpServers: { fs: { command: 'npx', ...extra } } })

// Each bad input with the key path and words its message must contain.
const bad: Array<[string, unknown, RegExp[]]> = [
  ['not an object', [], [/must hold a JSON\/YAML object/]],
  ['null document', null, [/must hold a JSON\/YAML object/]],
  ['mcpServers is a list', { mcpServers: [] }, [/mcpServers: must be an object mapping server keys/]],
  ['entry without command or url', { mcpServers: { fs: {} } }, [/mcpServers\.fs: needs "command".*or "url"/]],
  [
    'typo in command',
    { mcpServers: { fs: { comand: 'npx' } } },
    [/mcpServers\.fs\.comand: unknown key "comand"; did you mean "command"\?/],
  ],
  [
    'typo in url',
    { mcpServers: { web: { ulr: 'http://x' } } },
    [/mcpServers\.web\.ulr: unknown key "ulr"; did you mean "url"\?/],
  ],
  [
    'both command and url',
    { mcpServers: { fs: { command: 'x', url: 'http://x' } } },
    [/mcpServers\.fs: has both "command" and "url"/],
  ],
  ['typo in args', stdio({ argz: [] }), [/mcpServers\.fs\.argz: unknown key "argz"; did you mean "args"\?/]],
  [
    'the hidden-text switch as a word',
    stdio({ dangerouslyAllowHiddenText: 'yes' }),
    [/mcpServers\.fs\.dangerouslyAllowHiddenText: expected boolean, got "yes"/],
  ],
  [
    'the hidden-text switch by another name',
    stdio({ allowHiddenText: true }),
    [/mcpServers\.fs\.allowHiddenText: unknown key "allowHiddenText"/],
  ],
  [
    'args is a string',
    stdio({ args: '-y pkg' }),
    [/mcpServers\.fs\.args: expected Array, got "-y pkg" \(write args as a list of strings/],
  ],
  ['args holds a number', stdio({ args: ['-y', 3] }), [/mcpServers\.fs\.args\[1\]: expected string, got number 3/]],
  ['empty command', stdio({ command: '' }), [/mcpServers\.fs\.command: "" must not be empty/]],
  ['env is a list', stdio({ env: ['A=1'] }), [/mcpServers\.fs\.env: must be an object of string values, not a list/]],
  [
    'env value is a number',
    stdio({ env: { PORT: 8080 } }),
    [/mcpServers\.fs\.env\.PORT: expected a string, or \{ "secret": "NAME" \}.*, got a number/],
  ],
  [
    'unknown startup',
    stdio({ startup: 'later' }),
    [/mcpServers\.fs\.startup: is "later", expected one of \("eager" \| "lazy"\)/],
  ],
  ['negative timeout', stdio({ timeoutMs: -5 }), [/mcpServers\.fs\.timeoutMs: is number -5, expected at least 1/]],
  ['fractional timeout', stdio({ timeoutMs: 1.5 }), [/mcpServers\.fs\.timeoutMs: is number 1\.5, expected an integer/]],
  [
    'restart typo',
    stdio({ restart: { maxRetry: 3 } }),
    [/mcpServers\.fs\.restart\.maxRetry: unknown key "maxRetry"; did you mean "maxRetries"\?/],
  ],
  [
    'url on a stdio server',
    { mcpServers: { fs: { type: 'stdio', command: 'x', url: 'http://x' } } },
    [/mcpServers\.fs\.url: "url" does not fit a server of type "stdio"/],
  ],
  [
    'command on an http server',
    { mcpServers: { web: { type: 'http', url: 'http://x/mcp', command: 'x' } } },
    [/mcpServers\.web\.command: "command" does not fit a server of type "http"/],
  ],
  [
    'scope on an http server',
    { mcpServers: { web: { type: 'http', url: 'http://x/mcp', scope: 'principal' } } },
    [/mcpServers\.web\.scope: "scope" does not fit a server of type "http".*"scope", "idleMs"/],
  ],
  ['unknown scope', stdio({ scope: 'person' }), [/mcpServers\.fs\.scope: is "person", expected one of/]],
  [
    'an instance key on a shared server',
    stdio({ idleMs: 1000, sandbox: true }),
    [
      /mcpServers\.fs\.idleMs: shapes the processes of a scoped server: set "scope" to "principal"/,
      /mcpServers\.fs\.sandbox: shapes the processes of a scoped server/,
    ],
  ],
  [
    'a person’s secret on a shared server',
    stdio({ scope: 'shared', env: { GITHUB_TOKEN: { secret: 'github' } } }),
    [
      /mcpServers\.fs\.env\.GITHUB_TOKEN: \{ "secret": "github" \} is the secret of the person a process runs for.*set "scope" to "principal" or "session", or write "\$\{secret:github\}"/,
    ],
  ],
  [
    'an env value that is neither text nor a secret',
    stdio({ scope: 'principal', env: { N: 5 } }),
    [/mcpServers\.fs\.env\.N: expected a string, or \{ "secret": "NAME" \}.*got a number/],
  ],
  [
    'a person’s secret with a bad name',
    stdio({ scope: 'principal', env: { T: { secret: '../x' } } }),
    [/mcpServers\.fs\.env\.T\.secret: "\.\.\/x" must be a name of letters, digits/],
  ],
  [
    'idleMs as words',
    stdio({ scope: 'principal', idleMs: '10m' }),
    [/mcpServers\.fs\.idleMs: expected number, got "10m"/],
  ],
  [
    'idleMs 0',
    stdio({ scope: 'principal', idleMs: 0 }),
    [/mcpServers\.fs\.idleMs: is number 0, expected at least 100/],
  ],
  [
    'maxInstances not whole',
    stdio({ scope: 'principal', maxInstances: 2.5 }),
    [/mcpServers\.fs\.maxInstances: is number 2\.5, expected an integer/],
  ],
  [
    'a person’s secret with another key',
    stdio({ scope: 'principal', env: { T: { secret: 'github', fallback: 'x' } } }),
    [/mcpServers\.fs\.env\.T: expected a string, or \{ "secret": "NAME" \}/],
  ],
  [
    'maxInstances 0',
    stdio({ scope: 'session', maxInstances: 0 }),
    [/mcpServers\.fs\.maxInstances: is number 0, expected at least 1/],
  ],
  [
    'bad url',
    { mcpServers: { web: { url: 'not a url' } } },
    [/mcpServers\.web\.url: "not a url" must be an absolute URL/],
  ],
  [
    'unknown type',
    { mcpServers: { web: { type: 'websocket', url: 'ws://x' } } },
    [/mcpServers\.web\.type: unknown server type "websocket"; use "stdio", "http" or "sse"/],
  ],
  [
    'bad server key',
    { mcpServers: { 'my server': { command: 'x' } } },
    [/mcpServers\["my server"\]: server keys start with a letter or digit/],
  ],
  ['key starting with dash', { mcpServers: { '-x': { command: 'x' } } }, [/mcpServers\["-x"\]: server keys/]],
  ['reserved key', { mcpServers: { mycelium: { command: 'x' } } }, [/mcpServers\.mycelium: "mycelium" is reserved/]],
  [
    'reserved key in another case',
    { mcpServers: { Mycelium: { command: 'x' } } },
    [/mcpServers\.Mycelium: "mycelium" is reserved/],
  ],
  [
    'key with the separator',
    { mcpServers: { a__b: { command: 'x' } } },
    [/mcpServers\.a__b: the key contains the wire separator "__"/],
  ],
  [
    'key with a custom separator',
    { namespace: { separator: '-' }, mcpServers: { 'a-b': { command: 'x' } } },
    [/mcpServers\.a-b: the key contains the wire separator "-"/],
  ],
  [
    'prefix equal to another server’s key',
    { mcpServers: { gh: { command: 'x' }, github: { command: 'y', prefix: 'gh' } } },
    [/mcpServers\.github\.prefix: servers "gh" and "github" would both put "gh__" in front/],
  ],
  [
    'two servers with one prefix',
    { mcpServers: { a: { command: 'x', prefix: 'p' }, b: { command: 'y', prefix: 'p' } } },
    [/servers "a" and "b" would both put "p__"/],
  ],
  [
    'prefix with the separator',
    { mcpServers: { a: { command: 'x', prefix: 'p__q' } } },
    [/mcpServers\.a\.prefix: contains the wire separator "__"/],
  ],
  [
    'prefix true',
    { mcpServers: { a: { command: 'x', prefix: true } } },
    [/mcpServers\.a\.prefix: expected \(false \| string\), got boolean true \(false serves the child's own names/],
  ],
  ['unknown separator', { namespace: { separator: '/' } }, [/namespace\.separator: is "\/", expected one of/]],
  ['maxLength too small', { namespace: { maxLength: 8 } }, [/namespace\.maxLength: is number 8, expected at least 16/]],
  ['top-level typo', { mcpServer: {} }, [/mcpServer: unknown key "mcpServer"; did you mean "mcpServers"\?/]],
  ['namespace typo', { namspace: {} }, [/namspace: unknown key "namspace"; did you mean "namespace"\?/]],
  [
    'unknown key with no near match',
    { frobnicate: 1 },
    [/frobnicate: unknown key "frobnicate" \(allowed here: \$schema, mcpServers/],
  ],
  [
    'escalation value',
    { session: { escalation: 'sometimes' } },
    [/session\.escalation: is "sometimes", expected one of \("auto" \| "ask" \| "manual"\)/],
  ],
  [
    'session key typo',
    { session: { defaultSkill: [] } },
    [/session\.defaultSkill: unknown key "defaultSkill"; did you mean "defaultSkills"\?/],
  ],
  [
    'role definition typo',
    { roles: { definitions: { lead: { inherit: 'dev' } } } },
    [/roles\.definitions\.lead\.inherit: unknown key "inherit"; did you mean "inherits"\?/],
  ],
  ['sandbox trust', { sandbox: { trust: 'yolo' } }, [/sandbox\.trust: is "yolo", expected one of/]],
  ['sandbox executor', { sandbox: { executor: 'firejail' } }, [/sandbox\.executor: is "firejail", expected one of/]],
  [
    'http token env name',
    { http: { tokens: [{ env: 'not valid', role: 'dev' }] } },
    [/http\.tokens\[0\]\.env: "not valid" must be an environment variable name/],
  ],
  ['agent maxTurns', { agent: { maxTurns: 0 } }, [/agent\.maxTurns: is number 0, expected at least 1/]],
  ['agent codeMode', { agent: { codeMode: 'yes' } }, [/agent\.codeMode: expected boolean, got "yes"/]],
  [
    'missing variable',
    stdio({ args: ['${NOPE}'] }),
    [/mcpServers\.fs\.args\[0\]: environment variable NOPE is not set; set it, or write \$\{NOPE:-default\}/],
  ],
  [
    'missing bare variable',
    stdio({ cwd: '$NOPE_DIR/x' }),
    [/mcpServers\.fs\.cwd: environment variable NOPE_DIR is not set/],
  ],
  [
    'several problems at once',
    { mcpServers: { fs: { comand: 'x' }, web: { url: 'nope' } }, session: { escalation: 'x' } },
    [/fs\.comand/, /web\.url/, /session\.escalation/],
  ],
]

describe('parseConfig rejects bad input with the file, the key path and the fix', () => {
  it.each(bad)('%s', (_name, raw, expected) => {
    const message = problems(raw)
    expect(message.startsWith(`Invalid config ${file}:`)).toBe(true)
    for (const pattern of expected) expect(message).toMatch(pattern)
  })

  it('has at least 30 bad inputs', () => {
    expect(bad.length).toBeGreaterThanOrEqual(30)
  })
})

describe('secrets', () => {
  it('never shows a value of env or headers in a message', () => {
    const message = problems(
      {
        mcpServers: {
          fs: { command: 'x', env: { API_KEY: '${TOKEN}', N: 5, OBJ: { value: 'sekrit-value' } } },
          web: { url: 'http://x/mcp', headers: { Authorization: 42 } },
        },
        session: { escalation: '${TOKEN}' },
      },
      { env: { TOKEN: 'tok-123456' } },
    )
    expect(message).toMatch(/mcpServers\.fs\.env\.N/)
    expect(message).toMatch(/mcpServers\.fs\.env\.OBJ/)
    expect(message).toMatch(/mcpServers\.web\.headers\.Authorization: expected string, got a number/)
    expect(message).not.toContain('sekrit-value')
    expect(message).not.toMatch(/\b5\b.*env|42/)
    // A secret expanded into a non-secret key is not a secret: it may be shown where it was put.
    expect(message).toMatch(/session\.escalation/)
  })

  it('collects the expanded env and header values for redaction', () => {
    const { secrets } = parseConfig(
      {
        mcpServers: {
          fs: { command: 'x', env: { K: '${TOKEN}' } },
          web: { url: 'http://x/mcp', headers: { A: 'Bearer ${TOKEN}' } },
        },
      },
      { file, env },
    )
    expect(secrets).toEqual(['tok-123456', 'Bearer tok-123456'])
  })
})

describe('parseConfig accepts good input', () => {
  it('fills defaults and keeps the file order of servers', () => {
    const { config } = parseConfig({ mcpServers: { b: { command: 'x' }, a: { url: 'http://h/mcp' } } }, { file, env })
    expect([...config.servers.keys()]).toEqual(['b', 'a'])
    expect(config.servers.get('b')).toEqual({
      type: 'stdio',
      command: 'x',
      args: [],
      env: {},
      startup: 'eager',
      timeoutMs: 60_000,
      startupTimeoutMs: 30_000,
      disabled: false,
      restart: { maxRetries: 5, initialDelayMs: 500, maxDelayMs: 30_000 },
      pingIntervalMs: 30_000,
    })
    expect(config.servers.get('a')).toMatchObject({ type: 'http', url: 'http://h/mcp', headers: {} })
    expect(config.namespace).toEqual({ separator: '__', maxLength: 64 })
    expect(config.session).toEqual({
      defaultSkills: [],
      escalation: 'auto',
      protectedSkills: [],
      metaTools: true,
      lazyTools: false,
      codeMode: false,
    })
    expect(config.skills).toBeUndefined()
  })

  it('reads a scoped server with a person’s secret in its env, and its instance keys', () => {
    const { config } = parseConfig(
      {
        mcpServers: {
          gh: {
            command: 'x',
            scope: 'principal',
            env: { GITHUB_TOKEN: { secret: 'github' }, LEVEL: '${TOKEN}' },
            idleMs: 60_000,
            maxInstances: 3,
            persist: true,
            sandbox: true,
          },
        },
      },
      { file, env },
    )
    expect(config.servers.get('gh')).toMatchObject({
      scope: 'principal',
      env: { GITHUB_TOKEN: { secret: 'github' }, LEVEL: 'tok-123456' },
      idleMs: 60_000,
      maxInstances: 3,
      persist: true,
      sandbox: true,
    })
  })

  it('accepts a full example using every section of the config', () => {
    const { config } = parseConfig(
      {
        $schema: './mycelium.schema.json',
        mcpServers: {
          fs: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '.'],
            env: { TOKEN: '${TOKEN}' },
            cwd: '.',
            startup: 'eager',
            timeoutMs: 60000,
          },
          remote: {
            type: 'http',
            url: 'https://example.com/mcp',
            headers: { Authorization: 'Bearer ${API_TOKEN:-none}' },
          },
          old: { type: 'sse', url: 'http://localhost:3001/sse', disabled: true },
        },
        skills: { dirs: ['skills'] },
        roles: {
          default: 'developer',
          definitions: { guest: { allowedSkills: ['reader'] }, lead: { inherits: 'developer', deny: ['db:drop_*'] } },
        },
        session: { defaultSkills: ['common'], escalation: 'auto', protectedSkills: ['common'], metaTools: true },
        namespace: { separator: '__', maxLength: 64 },
        sandbox: { executor: 'auto', trust: 'sandboxed', timeoutMs: 60000, network: { allow: [] } },
        memory: { dir: '.mycelium/memory' },
        audit: { file: '.mycelium/audit.jsonl' },
        http: { tokens: [{ env: 'MYC_TOKEN_DEV', role: 'developer' }] },
        agent: { model: 'claude-sonnet-4-5', maxTurns: 30 },
      },
      { file, env },
    )
    expect(config.servers.get('remote')).toMatchObject({ headers: { Authorization: 'Bearer none' } })
    expect(config.servers.get('old')).toMatchObject({ type: 'sse', disabled: true })
    expect(config.roles.definitions.lead).toEqual({ inherits: 'developer', deny: ['db:drop_*'] })
  })

  it('reads a Claude Desktop file as it stands, ignoring its other settings', () => {
    const { config } = parseConfig(
      { globalShortcut: 'Ctrl+Space', mcpServers: { fs: { command: 'npx', args: ['-y', 'x'], env: { A: 'b' } } } },
      { file: '/Users/u/Library/Application Support/Claude/claude_desktop_config.json', env },
    )
    expect(config.servers.get('fs')).toMatchObject({ type: 'stdio', command: 'npx' })
  })

  it('reads a Claude Code .mcp.json with explicit types', () => {
    const { config } = parseConfig(
      {
        mcpServers: {
          a: { type: 'stdio', command: 'x', args: [], env: {} },
          b: { type: 'http', url: 'https://h/mcp', headers: {} },
          c: { type: 'sse', url: 'https://h/sse' },
          d: { type: 'streamable-http', url: 'https://h/mcp' },
        },
      },
      { file: '/repo/.mcp.json', env },
    )
    expect([...config.servers.values()].map((s) => s.type)).toEqual(['stdio', 'http', 'sse', 'http'])
  })

  it('still rejects unknown keys in a mycelium config file', () => {
    expect(problems({ globalShortcut: 'x' })).toMatch(/unknown key "globalShortcut"/)
  })
})

describe('environment expansion', () => {
  const expand = (value: string, e: Record<string, string | undefined> = env) => {
    const { config } = parseConfig({ mcpServers: { fs: { command: 'x', args: [value] } } }, { file, env: e })
    return (config.servers.get('fs') as { args: string[] }).args[0]
  }

  it('expands ${VAR}, $VAR and ${VAR:-default}', () => {
    expect(expand('${HOME}/a')).toBe('/home/u/a')
    expect(expand('$HOME/a')).toBe('/home/u/a')
    expect(expand('${NOPE:-fallback}')).toBe('fallback')
    expect(expand('${EMPTY:-fallback}')).toBe('fallback')
    expect(expand('${HOME:-fallback}')).toBe('/home/u')
    expect(expand('${NOPE:-}')).toBe('')
  })

  it('reads $$ as a literal dollar and leaves other text alone', () => {
    expect(expand('price: $$5')).toBe('price: $5')
    expect(expand('no vars here')).toBe('no vars here')
    expect(expand('${NOPE:-$HOME}')).toBe('/home/u')
  })

  it('expands in every string value but not in keys', () => {
    const { config } = parseConfig(
      { mcpServers: { fs: { command: '$HOME/bin/x', cwd: '${HOME}', env: { $HOME: '$HOME' } } } },
      { file, env },
    )
    expect(config.servers.get('fs')).toMatchObject({
      command: '/home/u/bin/x',
      cwd: '/home/u',
      env: { $HOME: '/home/u' },
    })
  })
})
