import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { bundle } from './e2e.js'

/** A project with three memory grants: `notes` (dev, qa: isolated), `team-notes` (lead reads dev), `plain` (no memory). */
export function project(): { dir: string; config: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-memory-e2e-'))
  const skill = (name: string, front: string) => {
    mkdirSync(path.join(dir, 'skills', name), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: ${name} skill\n${front}\n---\nInstructions of ${name}.\n`,
    )
  }
  skill('plain', 'allowedRoles: [dev, qa, lead, ops]')
  skill('notes', 'allowedRoles: [dev, qa]\ngrants: { memory: isolated }')
  skill('team-notes', 'allowedRoles: [lead]\ngrants: { memory: team, memoryTeamRoles: [dev] }')
  const config = path.join(dir, 'mycelium.config.json')
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {},
      skills: { dirs: ['skills'] },
      audit: { file: 'audit.jsonl' },
      memory: { maxEntryBytes: 2048 },
    }),
  )
  return { dir, config }
}

/** `node build/myc.cjs ARGS --config CONFIG`, waited for. */
export function cli(config: string, ...args: string[]) {
  return spawnSync(process.execPath, [bundle, ...args, '--config', config], { encoding: 'utf8', timeout: 30_000 })
}
