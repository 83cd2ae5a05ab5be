import { realpathSync, writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { elfInterpreter, mappedLibraries, ownFiles } from '../../src/sandbox/own-files.js'
import { ISOLATION_ARGS } from '../../src/sandbox/bubblewrap-args.js'
import { runnerArgs } from '../../src/sandbox/runner-args.js'
import { noNewProcessesFilter } from '../../src/sandbox/seccomp.js'

describe('code mode’s runner sandbox, its parts', () => {
  it('builds the exact bwrap arguments: an empty root, the runner’s files and code cache, mounts, hidden state, no new process', () => {
    expect(
      runnerArgs({
        own: { files: ['/usr/bin/node', '/opt/myc/myc-main.cjs'], links: [{ path: '/lib', target: 'usr/lib' }] },
        codeCache: '/opt/myc/.code-cache',
        mounts: ['/data'],
        masks: [
          { path: '/data/skills', kind: 'hide-dir' },
          { path: '/data/mycelium.config.json', kind: 'hide-file' },
        ],
        emptyFile: '/tmp/empty',
        scratchBytes: 1024,
        seccompFd: 3,
        env: { B: '2', A: '1' },
        argv: ['/usr/bin/node', '/opt/myc/myc-main.cjs'],
      }),
    ).toEqual([
      // Every namespace, capabilities, session: as every sandbox of myc (their values: tests/sandbox/builders.test.ts).
      ...ISOLATION_ARGS,
      ...['--seccomp', '3', '--tmpfs', '/', '--dev', '/dev', '--remount-ro', '/dev', '--proc', '/proc'],
      ...['--size', '1024', '--tmpfs', '/tmp'],
      ...['--ro-bind', '/usr/bin/node', '/usr/bin/node', '--ro-bind', '/opt/myc/myc-main.cjs', '/opt/myc/myc-main.cjs'],
      ...['--symlink', 'usr/lib', '/lib'],
      // The launcher's code cache: read-only, as everything else but the scratch /tmp.
      ...['--ro-bind', '/opt/myc/.code-cache', '/opt/myc/.code-cache'],
      ...['--ro-bind', '/data', '/data', '--tmpfs', '/data/skills'],
      ...['--ro-bind', '/tmp/empty', '/data/mycelium.config.json', '--remount-ro', '/data/skills'],
      ...['--remount-ro', '/', '--clearenv', '--setenv', 'A', '1', '--setenv', 'B', '2'],
      ...['--chdir', '/tmp', '--', '/usr/bin/node', '/opt/myc/myc-main.cjs'],
    ])
  })

  it('finds the files this executable needs: itself, its ELF interpreter, its libraries and the links to them', () => {
    expect(
      mappedLibraries(
        '7f00-7f01 r-xp 0 08:01 12 /usr/lib/libc.so.6\n7f01-7f02 r--p 0 0 0 [heap]\n7f02 r-xp 0 0 0 /opt/x.node',
      ),
    ).toEqual(['/usr/lib/libc.so.6'])
    if (process.platform !== 'linux') return
    const interpreter = elfInterpreter(process.execPath)
    expect(interpreter).toMatch(/^\/.*ld-(linux|musl)/)
    const text = path.join(mkdtempSync(path.join(tmpdir(), 'myc-own-')), 'bundle.cjs')
    writeFileSync(text, 'module.exports = 1')
    expect(elfInterpreter(text)).toBeUndefined()
    const own = ownFiles(process.execPath, [text])
    expect(own.files).toEqual(
      expect.arrayContaining([realpathSync(process.execPath), realpathSync(interpreter!), text]),
    )
    expect(own.files.some((f) => /\/libc\.so/.test(f))).toBe(true)
    for (const link of own.links) expect(path.isAbsolute(link.path)).toBe(true)
  })

  it('has a seccomp filter for x64 and arm64 only', () => {
    expect(noNewProcessesFilter('x64')!.length % 8).toBe(0)
    expect(noNewProcessesFilter('arm64')!.length).toBeLessThan(noNewProcessesFilter('x64')!.length)
    expect(noNewProcessesFilter('mips')).toBeUndefined()
  })
})
