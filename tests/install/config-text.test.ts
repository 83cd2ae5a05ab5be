import { describe, expect, it } from 'vitest'
import { parseText } from '../../src/config/load.js'
import { addServersToText } from '../../src/install/config-text.js'

const entry = { command: 'npx', args: ['-y', 'pkg@1.0.0'], env: { KEY: '${secret:new.KEY}' } }
const add = (text: string, file = 'mycelium.config.json') => addServersToText(text, file, [['new', entry]])
const serversOf = (text: string, file = 'mycelium.config.json') =>
  (parseText(text, file) as { mcpServers: Record<string, unknown> }).mcpServers

describe('adding an entry to a config’s text', () => {
  it('refuses a file whose top level is not an object, or whose mcpServers is not one', () => {
    expect(() => add('[1, 2]')).toThrow(/cannot add to mycelium\.config\.json: its top level is not an object/)
    expect(() => add('{ "mcpServers": [] }')).toThrow(/"mcpServers" is not an object/)
    expect(() => add('- a\n- b\n', 'c.yaml')).toThrow(/its top level is not a mapping/)
  })

  it('keeps comments and trailing commas, and writes the entry on one line among one-line entries', () => {
    const text = [
      '{',
      '  // my servers',
      '  "mcpServers": {',
      '    "fs":     { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."] }, // files',
      '    /* memory */',
      '    "memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] },',
      '  },',
      '  "skills": { "dirs": ["skills"] }',
      '}',
      '',
    ].join('\n')
    const out = add(text)
    expect(out).toBe(
      text.replace(
        '  },\n  "skills"',
        '    "new": { "command": "npx", "args": ["-y", "pkg@1.0.0"], "env": { "KEY": "${secret:new.KEY}" } },\n  },\n  "skills"',
      ),
    )
    expect(serversOf(out).new).toEqual(entry)
  })

  it('spreads the entry out among spread-out entries, with the file’s own indentation', () => {
    const text = '{\n    "mcpServers": {\n        "fs": {\n            "command": "npx"\n        }\n    }\n}'
    const out = add(text)
    expect(out).toBe(
      '{\n    "mcpServers": {\n        "fs": {\n            "command": "npx"\n        },\n        "new": {\n            "command": "npx",\n            "args": [\n                "-y",\n                "pkg@1.0.0"\n            ],\n            "env": {\n                "KEY": "${secret:new.KEY}"\n            }\n        }\n    }\n}',
    )
  })

  it('keeps a one-line file on one line, and makes mcpServers where there is none', () => {
    expect(add('{ "mcpServers": { "a": { "command": "x" } } }')).toBe(
      '{ "mcpServers": { "a": { "command": "x" }, "new": { "command": "npx", "args": ["-y", "pkg@1.0.0"], "env": { "KEY": "${secret:new.KEY}" } } } }',
    )
    expect(add('{ "mcpServers": {} }')).toBe(
      '{ "mcpServers": { "new": { "command": "npx", "args": ["-y", "pkg@1.0.0"], "env": { "KEY": "${secret:new.KEY}" } } } }',
    )
    const made = add('{\n  "$schema": "./mycelium.schema.json" // editor help\n}\n')
    expect(made).toMatch(
      /^\{\n {2}"\$schema": "\.\/mycelium\.schema\.json", \/\/ editor help\n {2}"mcpServers": \{\n {4}"new": \{\n/,
    )
    expect(serversOf(made).new).toEqual(entry)
    expect(JSON.parse(add(''))).toEqual({ mcpServers: { new: entry } })
  })

  it('adds to YAML keeping its comments', () => {
    const out = add('# my servers\nmcpServers:\n  fs: # files\n    command: npx\n', 'c.yml')
    expect(out).toMatch(/^# my servers\n/)
    expect(out).toContain('# files')
    expect(serversOf(out, 'c.yml')).toEqual({ fs: { command: 'npx' }, new: entry })
  })

  it('skips strings and comments that look like structure', () => {
    const text =
      '{\n  "note": "a } and a \\" and // not a comment",\n  /* "mcpServers": {} */\n  "mcpServers": {\n    "a": { "command": "}" }\n  }\n}\n'
    const out = add(text)
    expect(serversOf(out)).toEqual({ a: { command: '}' }, new: entry })
    expect(out).toContain('/* "mcpServers": {} */')
  })
})
