import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** Absolute path of a fixture server by behaviour name (echo, crash, hang, …). */
export function fixtureServer(name: string): string {
  return fileURLToPath(new URL(`../fixtures/servers/${name}.mjs`, import.meta.url))
}

export const repoRoot = path.resolve(fileURLToPath(new URL('../..', import.meta.url)))

/**
 * The config of tests/fixtures/policy/basic (its skills, roles and session)
 * with only the servers named, in a temp folder, for a command that reads no
 * other (a command or session starts every server of its config). Without
 * grow, the skill writer names a server that is not configured, so it is
 * disabled; without echo, every skill but shell is.
 */
export function policyBasicWith(servers: Array<'echo' | 'grow'>): string {
  const basic = path.join(repoRoot, 'tests', 'fixtures', 'policy', 'basic')
  const raw = JSON.parse(readFileSync(path.join(basic, 'mycelium.config.json'), 'utf8')) as {
    mcpServers: Record<string, { args: string[] }>
  }
  const entries = { echo: fixtureServer('echo'), grow: fixtureServer('list-changing') }
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'myc-policy-basic-')), 'mycelium.config.json')
  writeFileSync(
    file,
    JSON.stringify({
      ...raw,
      mcpServers: Object.fromEntries(servers.map((s) => [s, { ...raw.mcpServers[s], args: [entries[s]] }])),
      skills: { dirs: [path.join(basic, 'skills')] },
    }),
  )
  return file
}
