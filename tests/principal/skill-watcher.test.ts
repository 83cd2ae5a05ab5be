import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig, type LoadedConfig } from '../../src/config/load.js'
import { loadSources } from '../../src/principal/policy-mode.js'
import { watchSkills } from '../../src/principal/skill-watcher.js'
import { openRuntime } from '../../src/runtime/open-runtime.js'
import { captureLogger, waitFor } from '../helpers/runtime.js'
import { childSessions } from '../../src/eras/child-sessions.js'

/** A skill file in `dir` (relative to `root`). */
function writeSkill(root: string, dir: string, name: string): void {
  mkdirSync(path.join(root, dir, name), { recursive: true })
  writeFileSync(
    path.join(root, dir, name, 'SKILL.md'),
    `---\nname: ${name}\ndescription: ${name}\nallowedRoles: [dev]\nallowedTools: []\n---\n`,
  )
}

/** The watcher looks at its folders again on the turn of the event loop after a policy swap (setImmediate): this waits that turn out. */
const watcherSynced = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('watchSkills: the skill folders in force are the ones watched', () => {
  const roots: string[] = []
  afterEach(() => {
    for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true })
  })

  it('watches a skills.dirs entry a live reload added (and one created since), and lets go of one removed', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'myc-watch-dirs-'))
    roots.push(root)
    writeSkill(root, 'skills-a', 'first')
    const configFile = path.join(root, 'mycelium.config.json')
    writeFileSync(configFile, JSON.stringify({ skills: { dirs: ['skills-a'] } }))
    const { logger } = captureLogger()
    const { runtime, loaded, mode } = await openRuntime({
      childSessions,
      configPath: configFile,
      logger,
      version: 'test',
    })
    if (mode.kind !== 'policy') throw new Error('expected policy mode')
    let current: LoadedConfig = loaded
    const stop = watchSkills(() => current, mode.state, logger, 50)
    try {
      const names = () => mode.state.sources.skills.map((s) => s.name).sort()
      expect(names()).toEqual(['first'])
      // A reload names a second folder, which exists only after the watcher started.
      writeFileSync(configFile, JSON.stringify({ skills: { dirs: ['skills-a', 'skills-b'] } }))
      mkdirSync(path.join(root, 'skills-b'))
      current = await loadConfig({ configPath: configFile, cwd: root, env: {} })
      mode.state.replace(await loadSources(current, logger))
      await watcherSynced()
      writeSkill(root, 'skills-b', 'second')
      await waitFor(
        () => names().join() === 'first,second',
        5_000,
        'the skill written into the folder the reload added',
      )
      // The first folder is dropped by the next reload: a change there no longer reloads anything.
      writeFileSync(configFile, JSON.stringify({ skills: { dirs: ['skills-b'] } }))
      current = await loadConfig({ configPath: configFile, cwd: root, env: {} })
      mode.state.replace(await loadSources(current, logger))
      expect(names()).toEqual(['second'])
      await watcherSynced()
      writeSkill(root, 'skills-a', 'third')
      writeSkill(root, 'skills-b', 'fourth')
      await waitFor(() => names().includes('fourth'), 5_000, 'the change in the folder still watched')
      expect(names()).toEqual(['fourth', 'second'])
    } finally {
      stop()
      await runtime.close()
    }
  })
})
