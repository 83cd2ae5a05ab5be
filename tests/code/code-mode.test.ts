import { mkdirSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { codeMounts, prepareCodeMode, selfLaunch } from '../../src/code/code-mode.js'
import { parseConfig, type LoadedConfig } from '../../src/config/load.js'
import { MycError } from '../../src/errors.js'
import { ExecutorProbe } from '../../src/sandbox/probe.js'
import { codeProject, hasBwrap, testLaunch } from '../helpers/code-mode.js'

const file = '/cfg/mycelium.config.json'

function loaded(raw: Record<string, unknown>, at = file): LoadedConfig {
  const { config, secrets } = parseConfig(raw, { file: at, env: {} })
  return { file: at, dir: path.dirname(at), config, secrets }
}

function refusal(raw: Record<string, unknown>): string {
  try {
    loaded(raw)
  } catch (error) {
    expect(error).toBeInstanceOf(MycError)
    return (error as Error).message
  }
  throw new Error('expected the config to be refused')
}

/** A probe that answers for bubblewrap without running it. */
const probe = (works: boolean) => ({
  probe: async () => ({ executor: 'bubblewrap' as const, works, reason: 'bwrap is not installed', fix: 'install it' }),
})

describe('code mode’s config', () => {
  it('refuses bad keys, naming each and what it must be', () => {
    expect(refusal({ session: { codeMode: 'yes' } })).toMatch(/session\.codeMode/)
    expect(refusal({ codeMode: { timeoutMs: 'soon' } })).toMatch(/codeMode\.timeoutMs/)
    expect(refusal({ codeMode: { memoryMb: 64 } })).toMatch(/codeMode\.memoryMb.*128/)
    expect(refusal({ codeMode: { maxOutputBytes: 0 } })).toMatch(/codeMode\.maxOutputBytes/)
    expect(refusal({ codeMode: { mounts: [''] } })).toMatch(/codeMode\.mounts\[0\]: "" must not be empty/)
    expect(refusal({ codeMode: { timeout: 5 } })).toMatch(/codeMode.*timeout/)
    expect(refusal({ roles: { definitions: { guest: { codeMode: 1 } } } })).toMatch(
      /roles\.definitions\.guest\.codeMode/,
    )
  })

  it('has its defaults: off, 30 s, 256 MB, 64 KiB of output, no mounts', () => {
    const { config } = loaded({})
    expect(config.session.codeMode).toBe(false)
    expect(config.codeMode).toEqual({ timeoutMs: 30_000, memoryMb: 256, maxOutputBytes: 65_536, mounts: [] })
  })

  it('refuses a mount that does not exist, or one inside myc’s state, naming it', () => {
    const project = codeProject()
    mkdirSync(path.join(path.dirname(project), 'skills', 'common', 'more'))
    const at = (mounts: string[]) => codeMounts(loaded({ codeMode: { mounts } }, project))
    expect(() => at(['nowhere'])).toThrow(/codeMode\.mounts: nowhere does not exist; fix the path or remove it/)
    expect(() => at(['skills/common/more'])).toThrow(
      /codeMode\.mounts: skills\/common\/more lies in .*skills, which holds myc's own state and is never shown to code/,
    )
    // The config's own folder may be mounted: myc's state in it is hidden.
    const { masks } = at(['.'])
    const dir = path.dirname(project)
    expect(masks).toEqual(
      expect.arrayContaining([
        { path: project, kind: 'hide-file' },
        { path: path.join(dir, 'skills'), kind: 'hide-dir' },
      ]),
    )
  })
})

describe('where code mode cannot run, run_code is not offered and the reason says why', () => {
  it('without a sandbox, or with one it does not run under', async () => {
    const none = await prepareCodeMode(loaded({ sandbox: { executor: 'none' } }), { probe: probe(true) })
    expect(none).toEqual({
      ok: false,
      reason: 'sandbox.executor is "none", and code mode never runs code without a sandbox',
      fix: 'set sandbox.executor to "auto" or "bubblewrap"',
    })
    const docker = await prepareCodeMode(loaded({ sandbox: { executor: 'docker' } }), { probe: probe(true) })
    expect(docker).toMatchObject({ ok: false, reason: expect.stringMatching(/bubblewrap only.*"docker"/) })
    const mac = await prepareCodeMode(loaded({}), { probe: probe(true), platform: 'darwin' })
    expect(mac).toMatchObject({ ok: false, reason: 'code mode runs under bubblewrap, on Linux only' })
    const broken = await prepareCodeMode(loaded({}), { probe: probe(false), platform: 'linux' })
    expect(broken).toEqual({ ok: false, reason: 'bwrap is not installed', fix: 'install it' })
  })

  it.runIf(hasBwrap)('on an architecture its seccomp filter does not know, or without the built runner', async () => {
    const real = new ExecutorProbe()
    const arch = await prepareCodeMode(loaded({}), { probe: real, arch: 'ia32', launch: testLaunch })
    expect(arch).toMatchObject({ ok: false, reason: expect.stringMatching(/x64 and arm64 only, not of ia32/) })
    // Run from source (this test) there is no bundle to start as the runner.
    expect(await selfLaunch()).toBeUndefined()
    const source = await prepareCodeMode(loaded({}), { probe: real })
    expect(source).toMatchObject({ ok: false, reason: expect.stringMatching(/this myc runs from source/) })
  })
})
