import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { stripJsonComments } from '../src/config/load.js'
import { parseConfig } from '../src/config/parse.js'
import { repoRoot } from './helpers/fixtures.js'

/** The top-level keys of a myc config: a block holding one of them is a config example. */
const CONFIG_KEYS = [
  'mcpServers',
  'servers',
  'skills',
  'roles',
  'session',
  'namespace',
  'sandbox',
  'memory',
  'audit',
  'http',
  'agent',
  'limits',
  'codeMode',
]

interface Example {
  where: string
  text: string
}

/** Every ```json / ```jsonc block of the README and docs/ that is a myc config or a fragment of one (`"http": { … }`). */
function configExamples(): Example[] {
  const files = [
    'README.md',
    ...readdirSync(path.join(repoRoot, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => path.join('docs', f)),
  ]
  const out: Example[] = []
  for (const file of files) {
    const text = readFileSync(path.join(repoRoot, file), 'utf8')
    for (const m of text.matchAll(/```jsonc?\n([\s\S]*?)```/g)) {
      const body = m[1]!.trim()
      const line = text.slice(0, m.index).split('\n').length
      // A fragment starting with a key is one entry of the config object.
      const whole = body.startsWith('"') ? `{${body}}` : body
      const keys = CONFIG_KEYS.filter((k) => new RegExp(`^\\s*\\{?\\s*"${k}"\\s*:`, 'm').test(whole))
      // An MCP client's own config pointing at myc (a server named mycelium) is not a myc config.
      if (keys.length === 0 || /"mycelium"\s*:\s*\{/.test(whole)) continue
      out.push({ where: `${file}:${line}`, text: whole })
    }
  }
  return out
}

describe('config examples in the docs', () => {
  const examples = configExamples()

  it('are found (the scan itself works)', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5)
    expect(examples.map((e) => e.where)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^docs\/team\.md:/), expect.stringMatching(/^docs\/http\.md:/)]),
    )
  })

  it.each(examples.map((e) => [e.where, e] as const))('%s loads as written', (where, example) => {
    // Every ${VAR} an example names is set, as it would be where it runs.
    const env = new Proxy({}, { get: () => 'value-from-the-environment-0123456789' }) as Record<string, string>
    const raw = JSON.parse(stripJsonComments(example.text)) as unknown
    expect(() => parseConfig(raw, { file: where, env })).not.toThrow()
  })
})
