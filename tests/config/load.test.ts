import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { configJsonSchema } from '../../src/config/json-schema.js'
import { loadConfig } from '../../src/config/load.js'
import { redact } from '../../src/redact.js'
import { repoRoot } from '../helpers/fixtures.js'

function dir(files: Record<string, string>): string {
  const d = mkdtempSync(path.join(tmpdir(), 'myc-cfg-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(d, name), text)
  return d
}

const env = { HOME: '/home/u' }

describe('loadConfig', () => {
  it('finds mycelium.config.json, then .yaml, then .yml', async () => {
    const all = dir({
      'mycelium.config.json': '{"mcpServers":{"j":{"command":"x"}}}',
      'mycelium.config.yaml': 'mcpServers:\n  y:\n    command: x\n',
      'mycelium.config.yml': 'mcpServers: {}\n',
    })
    expect([...(await loadConfig({ cwd: all, env })).config.servers.keys()]).toEqual(['j'])
    const yaml = dir({
      'mycelium.config.yaml': 'mcpServers:\n  y:\n    command: x\n',
      'mycelium.config.yml': 'mcpServers:\n  z:\n    command: x\n',
    })
    const loaded = await loadConfig({ cwd: yaml, env })
    expect([...loaded.config.servers.keys()]).toEqual(['y'])
    expect(loaded.file).toBe(path.join(yaml, 'mycelium.config.yaml'))
    expect(loaded.dir).toBe(yaml)
    const yml = dir({ 'mycelium.config.yml': 'mcpServers:\n  z:\n    command: x\n' })
    expect([...(await loadConfig({ cwd: yml, env })).config.servers.keys()]).toEqual(['z'])
  })

  it('uses the embedded default when there is no file', async () => {
    const empty = dir({})
    const loaded = await loadConfig({ cwd: empty, env })
    expect(loaded.file).toBeUndefined()
    expect(loaded.dir).toBe(empty)
    expect(loaded.config.servers.size).toBe(0)
  })

  it('resolves --config against cwd and fails clearly when it is missing', async () => {
    const d = dir({ 'custom.json': '{"mcpServers":{}}' })
    expect((await loadConfig({ cwd: d, configPath: 'custom.json', env })).file).toBe(path.join(d, 'custom.json'))
    await expect(loadConfig({ cwd: d, configPath: 'nope.json', env })).rejects.toMatchObject({
      code: 'config_not_found',
      message: expect.stringContaining(path.join(d, 'nope.json')),
    })
  })

  it('names the file, line and column of a JSON syntax error', async () => {
    const d = dir({ 'mycelium.config.json': '{\n  "mcpServers": {\n    "fs": { "command": "x" "args": [] }\n  }\n}\n' })
    await expect(loadConfig({ cwd: d, env })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(/Invalid JSON in .*mycelium\.config\.json at line 3, column \d+/),
    })
  })

  it('names the file, line and column of a YAML syntax error', async () => {
    const d = dir({ 'mycelium.config.yaml': 'mcpServers:\n  fs:\n    command: [x\n' })
    await expect(loadConfig({ cwd: d, env })).rejects.toMatchObject({
      code: 'config_invalid',
      message: expect.stringMatching(/Invalid YAML in .*mycelium\.config\.yaml at line \d+, column \d+/),
    })
  })

  it('reads JSON with comments and trailing commas (JSONC), keeping error positions', async () => {
    const text =
      '{\n  // servers\n  "mcpServers": { /* none yet, */ },\n  "namespace": { "separator": "__", }, // "//" inside a string stays\n  "skills": { "dirs": ["a//b", "/* c */",], },\n}\n'
    const loaded = await loadConfig({ cwd: dir({ 'mycelium.config.json': text }), env })
    expect(loaded.config.namespace.separator).toBe('__')
    expect(loaded.config.skills?.dirs).toEqual(['a//b', '/* c */'])
    const bad = dir({ 'mycelium.config.json': '{\n  // a comment\n  "mcpServers": {} x\n}' })
    await expect(loadConfig({ cwd: bad, env })).rejects.toThrow(/line 3, column 20/)
  })

  it('takes the config from MYC_CONFIG when --config is not given, and says where a missing one came from', async () => {
    const d = dir({ 'other.json': '{"mcpServers":{"a":{"command":"x"}}}' })
    const loaded = await loadConfig({ cwd: tmpdir(), env: { ...env, MYC_CONFIG: path.join(d, 'other.json') } })
    expect(loaded.file).toBe(path.join(d, 'other.json'))
    // The flag wins over the variable.
    const flag = await loadConfig({ cwd: d, configPath: 'other.json', env: { ...env, MYC_CONFIG: '/nope.json' } })
    expect(flag.file).toBe(path.join(d, 'other.json'))
    await expect(loadConfig({ cwd: d, env: { ...env, MYC_CONFIG: 'missing.json' } })).rejects.toThrow(
      /missing\.json \(named by MYC_CONFIG/,
    )
  })

  it('reads a claude_desktop_config.json as it stands', async () => {
    const d = dir({
      'claude_desktop_config.json': JSON.stringify({
        mcpServers: { fs: { command: 'npx', args: ['-y', 'x'] } },
        globalShortcut: 'Alt+Space',
      }),
    })
    const loaded = await loadConfig({ cwd: d, configPath: 'claude_desktop_config.json', env })
    expect(loaded.config.servers.get('fs')).toMatchObject({ type: 'stdio', command: 'npx', args: ['-y', 'x'] })
  })

  it('loads the repo’s own mycelium.config.json', async () => {
    const loaded = await loadConfig({ cwd: repoRoot, env: {} })
    expect([...loaded.config.servers.keys()]).toEqual(['fs', 'memory'])
    expect(loaded.config.servers.get('memory')).toMatchObject({ env: { MEMORY_FILE_PATH: '.mycelium/memory.jsonl' } })
  })
})

describe('mycelium.schema.json', () => {
  const onDisk = JSON.parse(readFileSync(path.join(repoRoot, 'mycelium.schema.json'), 'utf8'))

  it('is in sync with the valibot schema (regenerate: npx tsx build/gen-schema.ts)', () => {
    expect(onDisk).toEqual(configJsonSchema())
  })

  it('accepts the repo config and rejects an unknown key', () => {
    const ajv = new Ajv({ strict: false })
    const validate = ajv.compile(onDisk)
    expect(validate(JSON.parse(readFileSync(path.join(repoRoot, 'mycelium.config.json'), 'utf8')))).toBe(true)
    expect(validate({ mcpServers: { fs: { command: 'x', comand: 'y' } } })).toBe(false)
    expect(validate({ mcpServers: { web: { url: 'https://x/mcp', headers: { A: 'b' } } } })).toBe(true)
    expect(validate({ namspace: {} })).toBe(false)
  })
})

describe('redact', () => {
  it('hides every secret, longest first, and leaves short values alone', () => {
    expect(redact('token tok-123 and Bearer tok-123 here', ['tok-123', 'Bearer tok-123'])).toBe(
      'token *** and *** here',
    )
    expect(redact('a b', ['a'])).toBe('a b')
    expect(redact('nothing to hide', [])).toBe('nothing to hide')
  })
})
