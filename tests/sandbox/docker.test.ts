import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ShellGuard } from '../../src/sandbox/guard/guard.js'
import { ExecutorProbe } from '../../src/sandbox/probe.js'
import { Sandbox } from '../../src/sandbox/sandbox.js'
import { waitFor } from '../helpers/wait-for.js'

/** A fake `docker` on PATH: records its arguments, answers `info`, and runs nothing. */
function fakeDocker(): { dir: string; log: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-fake-docker-'))
  const log = path.join(dir, 'calls.jsonl')
  writeFileSync(
    path.join(dir, 'docker'),
    // Logs in the shell itself: a node started for it could still be loading when a short timeout kills the fake.
    [
      '#!/bin/sh',
      "out='['; sep=''",
      'for a in "$@"; do',
      `  esc=$(printf '%s' "$a" | sed 's/\\\\/\\\\\\\\/g; s/"/\\\\"/g')`,
      '  out="$out$sep\\"$esc\\""; sep=","',
      'done',
      `printf '%s]\\n' "$out" >> "${log}"`,
      'case "$1" in info) echo 27.0.0 ;; run) echo ran-in-fake-docker ;; esac',
      '',
    ].join('\n'),
  )
  chmodSync(path.join(dir, 'docker'), 0o755)
  return { dir, log }
}

const savedPath = process.env.PATH
afterEach(() => {
  process.env.PATH = savedPath
})

describe('docker executor', () => {
  it('probes with docker info and runs with the hardened arguments', async () => {
    const fake = fakeDocker()
    process.env.PATH = `${fake.dir}:${savedPath}`
    const ws = mkdtempSync(path.join(tmpdir(), 'myc-dws-'))
    const sandbox = new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() })
    const r = await sandbox.run({
      command: ['npm', 'test'],
      trust: 'sandboxed',
      executor: 'docker',
      workspace: ws,
      timeoutMs: 10_000,
      outputLimitBytes: 10_000,
      network: { allow: [] },
      docker: { image: 'node:22' },
    })
    expect(r.ok && r.outcome).toMatchObject({ executor: 'docker', stdout: 'ran-in-fake-docker\n', exitCode: 0 })
    const calls = readFileSync(fake.log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[])
    expect(calls[0]).toEqual(['info', '--format', '{{.ServerVersion}}'])
    const run = calls[1]!
    expect(run.slice(0, 3)).toEqual(['run', '--rm', '--init'])
    for (const flag of [
      ['--network', 'none'],
      ['--cap-drop', 'ALL'],
      ['--security-opt', 'no-new-privileges'],
    ])
      expect(run.join(' ')).toContain(flag.join(' '))
    expect(run).toContain('--read-only')
    expect(run).toContain(`type=bind,source=${ws},target=/workspace`)
    expect(run.slice(-3)).toEqual(['node:22', 'npm', 'test'])
    expect(run.join(' ')).not.toContain('docker.sock')
  })

  it('kills the named container on timeout', async () => {
    const fake = fakeDocker()
    writeFileSync(
      path.join(fake.dir, 'docker'),
      readFileSync(path.join(fake.dir, 'docker'), 'utf8').replace(
        'run) echo ran-in-fake-docker ;;',
        'run) sleep 60 ;;',
      ),
    )
    process.env.PATH = `${fake.dir}:${savedPath}`
    const sandbox = new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() })
    const r = await sandbox.run({
      command: ['sleep', '100'],
      trust: 'sandboxed',
      executor: 'docker',
      workspace: mkdtempSync(path.join(tmpdir(), 'myc-dws-')),
      // Room for the fake docker (a shell script) to start and log its run on a busy machine.
      timeoutMs: 2_000,
      outputLimitBytes: 1000,
      network: { allow: [] },
    })
    expect(r.ok && r.outcome.timedOut).toBe(true)
    await waitFor(() => readFileSync(fake.log, 'utf8').split('\n').length > 2, 5_000, 'the run to be logged')
    const run = JSON.parse(readFileSync(fake.log, 'utf8').split('\n')[1]!) as string[]
    const name = run[run.indexOf('--name') + 1]
    // The fake docker logs each call as a JSON line: the kill's line is there once it ran.
    await waitFor(
      () => readFileSync(fake.log, 'utf8').includes(`${JSON.stringify(['kill', name])}\n`),
      5_000,
      `docker kill ${name} to be called`,
    )
  })

  it('refuses what it cannot carry before it runs anything: a comma in a mount, a network allow-list', async () => {
    const fake = fakeDocker()
    process.env.PATH = `${fake.dir}:${savedPath}`
    const sandbox = new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() })
    const request = {
      command: ['true'],
      trust: 'sandboxed' as const,
      executor: 'docker' as const,
      workspace: mkdtempSync(path.join(tmpdir(), 'myc-dws-')),
      timeoutMs: 5_000,
      outputLimitBytes: 1000,
      network: { allow: [] },
    }
    const comma = mkdtempSync(path.join(tmpdir(), 'myc-dws,'))
    expect(await sandbox.run({ ...request, workspace: comma })).toEqual({
      ok: false,
      error: {
        code: 'invalid_request',
        message: `the docker executor cannot mount a path that has a comma or a newline: ${JSON.stringify(comma)}`,
      },
    })
    const allow = await sandbox.run({ ...request, network: { allow: ['example.com'] } })
    expect(allow).toMatchObject({ ok: false, error: { code: 'sandbox_unavailable' } })
    expect(!allow.ok && allow.error.message).toMatch(/docker runs with no network at all/)
    const calls = readFileSync(fake.log, 'utf8').trim().split('\n')
    expect(calls.every((l) => (JSON.parse(l) as string[])[0] === 'info')).toBe(true)
  })

  it('with the real client and no engine, refuses clearly', async () => {
    const sandbox = new Sandbox({ guard: new ShellGuard(), probe: new ExecutorProbe() })
    const r = await sandbox.run({
      command: ['true'],
      trust: 'sandboxed',
      executor: 'docker',
      workspace: mkdtempSync(path.join(tmpdir(), 'myc-dws-')),
      timeoutMs: 5_000,
      outputLimitBytes: 1000,
      network: { allow: [] },
    })
    expect(r.ok).toBe(false)
    expect(!r.ok && r.error.message).toMatch(/docker: (no Docker engine answers|the docker client is not installed)/)
  })
})
