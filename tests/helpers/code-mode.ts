import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import type { Client } from '@modelcontextprotocol/client'
import type { LoadedConfig } from '../../src/config/load.js'
import { bundleLaunch, prepareCodeMode, type RunnerLaunch } from '../../src/code/code-mode.js'
import type { CodeRunner } from '../../src/code/code-runner.js'
import type { RunOutcome } from '../../src/code/code-result.js'
import { loadConfig } from '../../src/config/load.js'
import { ExecutorProbe } from '../../src/sandbox/probe.js'
import { fixtureServer, repoRoot } from './fixtures.js'
import { requireTool } from './tools.js'

/** The bundle code mode's runner runs in tests (the global setup builds it when src/ is newer). */
export const runnerBundle = path.join(repoRoot, 'build', 'myc-main.cjs')

/** This Node.js with the bundle alone (no launcher, no code cache). */
export const testLaunch: RunnerLaunch = {
  argv: [process.execPath, runnerBundle],
  files: [runnerBundle],
  typescript: false,
}

/**
 * The runner as `node build/myc.cjs` would start it: through the launcher,
 * from the code cache it keeps beside the bundle, made first by running the
 * launcher once (as any `myc` command outside does).
 */
function cachedLaunch(bundle = runnerBundle): RunnerLaunch {
  if (cacheIsThere(bundle)) return bundleLaunch(bundle, false, {})
  const r = spawnSync(process.execPath, [path.join(path.dirname(bundle), 'myc.cjs'), '--version'], {
    env: { ...process.env, NODE_DISABLE_COMPILE_CACHE: undefined, NODE_COMPILE_CACHE: undefined },
  })
  if (r.status !== 0) throw new Error(`the launcher did not start: ${r.stderr.toString()}`)
  return bundleLaunch(bundle, false, {})
}

export const hasBwrap = requireTool(
  'bwrap',
  process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0,
)

/** Whether the launcher's Node 20 cache of `bundle` is there already (build/launcher.cjs names it by length and CRC-32); Node 22's cannot be told. */
function cacheIsThere(bundle: string): boolean {
  if (Number(process.versions.node.split('.')[0]) >= 22) return false
  const bytes = readFileSync(bundle)
  const name = `myc-main-${process.version}-${process.arch}-${bytes.length}-${crc32(bytes).toString(16)}.bin`
  return existsSync(path.join(path.dirname(bundle), '.code-cache', name))
}

/** Code mode's runner for a loaded config, started from the test bundle through its launcher; throws where code mode cannot run. */
export async function testCodeRunner(loaded: LoadedConfig, launch = cachedLaunch()): Promise<CodeRunner> {
  const setup = await prepareCodeMode(loaded, { probe: new ExecutorProbe(), launch })
  if (!setup.ok) throw new Error(`code mode cannot run here: ${setup.reason} (fix: ${setup.fix})`)
  return setup.runner
}

const noHooks = { tools: () => [], onChange: () => () => {}, call: async () => ({ ok: true as const, value: null }) }

/** One run of `code` by a runner started as `launch` says. */
export async function runOnce(launch: RunnerLaunch, code: string): Promise<RunOutcome> {
  const file = codeProject()
  const runner = await testCodeRunner(await loadConfig({ configPath: file, cwd: path.dirname(file), env: {} }), launch)
  return runner.run(code, noHooks, { onCancel() {} })
}

/** Code that tries every way to change the cache folder: the error code of each try (all EROFS when none works). */
export const tamper = (dir: string, file: string) => `const fs = require('node:fs')
const tries = [
  () => fs.writeFileSync(${JSON.stringify(file)}, 'poison'),
  () => fs.appendFileSync(${JSON.stringify(file)}, 'poison'),
  () => fs.writeFileSync(${JSON.stringify(path.join(dir, 'myc-main-new.bin'))}, 'poison'),
  () => fs.rmSync(${JSON.stringify(file)}),
  () => fs.renameSync(${JSON.stringify(file)}, ${JSON.stringify(`${file}.moved`)}),
  () => fs.chmodSync(${JSON.stringify(dir)}, 0o777),
]
return tries.map((t) => { try { t(); return 'written' } catch (error) { return error.code } })`

const SKILLS: Record<string, string> = {
  common: 'allowedRoles: ["*"]\nallowedTools: [echo:echo]',
  math: 'allowedRoles: [guest]\nallowedTools: [echo:add]\ntriggers: [sum]',
  waiting: 'allowedRoles: [guest]\nallowedTools: [hang:hang]',
  admin: 'allowedRoles: [admin]\nallowedTools: ["echo:*", "hang:*"]',
}

/**
 * A project in a new temp folder, in code mode: `echo` (text-echo: echo,
 * add, fail) and `hang`; guest starts with `common` (echo:echo) and may
 * activate `math` (echo:add) and `waiting` (hang:hang); echo:fail is for
 * admin alone. Returns the config file's path.
 */
export function codeProject(extra: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-code-'))
  for (const [name, body] of Object.entries(SKILLS)) {
    mkdirSync(path.join(dir, 'skills', name), { recursive: true })
    writeFileSync(
      path.join(dir, 'skills', name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: The ${name} skill\n${body}\n---\n${name} instructions.\n`,
    )
  }
  const file = path.join(dir, 'mycelium.config.json')
  const config = {
    mcpServers: {
      echo: { command: process.execPath, args: [fixtureServer('text-echo')] },
      hang: { command: process.execPath, args: [fixtureServer('hang')] },
    },
    roles: { default: 'guest' },
    session: { defaultSkills: ['common'], codeMode: true },
    ...extra,
  }
  writeFileSync(file, JSON.stringify(config, null, 2))
  return file
}

/** run_code's one text content and whether it is an error. */
export async function runCode(client: Client, code: string): Promise<{ text: string; isError: boolean }> {
  const result = await client.callTool({ name: 'mycelium__run_code', arguments: { code } })
  const content = result.content as Array<{ type: string; text: string }>
  return { text: content.map((c) => c.text).join('\n'), isError: result.isError === true }
}

/** Processes of code mode runs alive now (bubblewrap names the test bundle in its arguments; the runner is the bundle or its launcher, with no argument). */
export function runnerProcesses(): string[] {
  const launcher = path.join(path.dirname(runnerBundle), 'myc.cjs')
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(runnerBundle) || line.trimEnd().endsWith(` ${launcher}`))
}

/**
 * Code that defines `ask(id, name)`: a call the code forges past `tools`,
 * straight to the runner's thread, resolving with the message of its answer
 * (what a trick with string names gets back).
 */
export const FORGED_CALL = `const { parentPort } = require('node:worker_threads')
const ask = (id, name, args = {}) => new Promise((resolve) => {
  parentPort.on('message', (m) => m.id === id && resolve(m.message))
  parentPort.postMessage({ type: 'call', id, name, arguments: args })
})
`
