import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createLogger } from '../../src/logger.js'
import { createView } from '../../src/principal/policy-mode.js'
import type { PrincipalView } from '../../src/principal/view.js'
import type { Runtime } from '../../src/runtime/runtime.js'
import { surveyPins, writeSurvey } from '../../src/inspect/pins.js'
import { fixtureEntry } from './runtime.js'

/** A server entry of tests/fixtures/servers/pinnable.mjs with these variables (PIN_DESCRIPTION, PIN_EXTRA, PIN_PROMPT, PIN_HIDDEN). */
export function pinnable(
  env: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return fixtureEntry('pinnable', { env, ...extra })
}

/** A project in a new temp folder: its config (and skills, by name: SKILL.md text); the lock goes beside the config. */
export class PinProject {
  readonly dir = mkdtempSync(path.join(tmpdir(), 'myc-pin-'))
  readonly config = path.join(this.dir, 'mycelium.config.json')
  readonly lock = path.join(this.dir, 'mycelium.lock.json')
  readonly audit = path.join(this.dir, 'audit.jsonl')

  constructor(config: Record<string, unknown>, skills: Record<string, string> = {}) {
    this.write(config)
    for (const [name, text] of Object.entries(skills)) {
      mkdirSync(path.join(this.dir, 'skills', name), { recursive: true })
      writeFileSync(path.join(this.dir, 'skills', name, 'SKILL.md'), text)
    }
  }

  /** Writes the config (the audit log is always on, in the project). */
  write(config: Record<string, unknown>): void {
    writeFileSync(this.config, JSON.stringify({ audit: { file: 'audit.jsonl' }, ...config }, null, 2))
  }

  /** Pins what the servers offer now, as `myc pin --yes` does (the same functions, in this process). */
  async pin(): Promise<void> {
    await writeSurvey(await surveyPins({ configPath: this.config, logger: createLogger({ quiet: true }) }))
  }
}

/** The view of an open-mode session (lazy when the config says so). */
export function openModeView(runtime: Runtime): PrincipalView {
  return createView({ kind: 'open' }, runtime.loaded, { env: {}, catalogue: runtime.catalogue, logger: runtime.logger })
}
