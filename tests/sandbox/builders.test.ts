import { describe, expect, it } from 'vitest'
import { bubblewrapArgs } from '../../src/sandbox/bubblewrap-args.js'
import { dockerRunArgs } from '../../src/sandbox/docker-args.js'
import { explainBwrapFailure, explainDockerFailure } from '../../src/sandbox/probe.js'
import { sandboxExecArgs, seatbeltProfile } from '../../src/sandbox/seatbelt-profile.js'

const HOSTILE = ['/w/with space', '/w/quote"s', "/w/apo'strophe", '/w/paren(s)', '/w/new\nline', '/w/semi;colon', '/w/$(rm -rf ~)', '/w/back`tick`']

describe('bubblewrap arguments', () => {
  it('are exactly these for sandboxed', () => {
    expect(bubblewrapArgs({ trust: 'sandboxed', workspace: '/ws', home: '/home/u', readOnlyInWorkspace: ['/ws/.git/hooks', '/ws/mycelium.config.json'], env: { FOO: 'bar' }, argv: ['sh', '-c', 'make'] })).toEqual([
      '--unshare-all', '--unshare-user', '--disable-userns', '--cap-drop', 'ALL', '--die-with-parent', '--new-session',
      '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run', '--tmpfs', '/home/u',
      '--bind', '/ws', '/ws', '--ro-bind', '/ws/.git/hooks', '/ws/.git/hooks', '--ro-bind', '/ws/mycelium.config.json', '/ws/mycelium.config.json',
      '--clearenv', '--setenv', 'FOO', 'bar', '--setenv', 'HOME', '/home/u', '--setenv', 'LANG', 'C.UTF-8', '--setenv', 'PATH', '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', '--setenv', 'TMPDIR', '/tmp',
      '--chdir', '/ws', '--', 'sh', '-c', 'make',
    ])
  })

  it('bind the workspace read-only and skip the re-binds for restricted', () => {
    const args = bubblewrapArgs({ trust: 'restricted', workspace: '/ws', home: '/home/u', readOnlyInWorkspace: ['/ws/.git/hooks'], env: {}, argv: ['python3', 'x.py'] })
    expect(args.join(' ')).toContain('--ro-bind /ws /ws')
    expect(args).not.toContain('--bind')
    expect(args.slice(-4)).toEqual(['/ws', '--', 'python3', 'x.py'])
  })

  it('keep hostile path names as single arguments', () => {
    for (const p of HOSTILE) {
      const args = bubblewrapArgs({ trust: 'sandboxed', workspace: p, home: '/h', readOnlyInWorkspace: [], env: {}, argv: ['true'] })
      expect(args.filter((a) => a === p)).toHaveLength(3)
      expect(args.filter((a) => a.includes(p) && a !== p)).toEqual([])
    }
  })
})

describe('Seatbelt profile', () => {
  it('denies by default, writes only where allowed, and has no network rule', () => {
    const profile = seatbeltProfile('sandboxed')
    expect(profile).toBe(`(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup (global-name "com.apple.system.logger"))
(allow file-read*)
(allow file-write*
  (subpath (param "WORKSPACE"))
  (subpath (param "TMPDIR"))
  (literal "/dev/null")
  (literal "/dev/tty"))
(deny file-write* (subpath (param "PROTECTED")))
`)
    expect(profile).not.toMatch(/network/)
    expect(seatbeltProfile('restricted')).not.toContain('WORKSPACE')
  })

  it('opens only the filtering proxy’s loopback port when there is an allow-list', () => {
    const profile = seatbeltProfile('sandboxed', 41234)
    expect(profile.endsWith('(allow network-outbound (remote ip "localhost:41234"))\n')).toBe(true)
    expect(profile.match(/network/g)).toHaveLength(1)
    expect(sandboxExecArgs({ trust: 'sandboxed', workspace: '/w', tmpdir: '/t', protectedDir: '/p', argv: ['curl', 'x'], proxyPort: 41234 })[1]).toBe(profile)
  })

  it('passes paths only as -D parameters, never inside the profile', () => {
    for (const p of HOSTILE) {
      const args = sandboxExecArgs({ trust: 'sandboxed', workspace: p, tmpdir: '/t', protectedDir: '/p', argv: ['true'] })
      expect(args[1]).toBe(seatbeltProfile('sandboxed'))
      expect(args[1]).not.toContain(p)
      expect(args).toContain(`WORKSPACE=${p}`)
      expect(args.slice(-2)).toEqual(['--', 'true'])
    }
  })
})

describe('docker arguments', () => {
  it('are exactly these', () => {
    expect(dockerRunArgs({ trust: 'sandboxed', name: 'myc-abc', image: 'node:22', workspace: '/ws', uid: 1000, gid: 1000, env: { B: '2', A: '1' }, argv: ['npm', 'test'] })).toEqual([
      'run', '--rm', '--init', '--name', 'myc-abc', '--network', 'none', '--read-only', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
      '--pids-limit', '256', '--memory', '1g', '--cpus', '1', '--user', '1000:1000', '--tmpfs', '/tmp:rw,nosuid,nodev,size=256m',
      '--mount', 'type=bind,source=/ws,target=/workspace', '--workdir', '/workspace', '--env', 'A=1', '--env', 'B=2', '--', 'node:22', 'npm', 'test',
    ])
  })

  it('mount read-only for restricted and never the Docker socket', () => {
    const args = dockerRunArgs({ trust: 'restricted', name: 'n', image: 'i', workspace: '/ws', uid: 1, gid: 1, env: {}, argv: ['x'] })
    expect(args).toContain('type=bind,source=/ws,target=/workspace,readonly')
    expect(args.join(' ')).not.toMatch(/docker\.sock/)
  })
})

describe('probe explanations', () => {
  it('say how to fix a missing bwrap, disabled user namespaces and the AppArmor case', () => {
    expect(explainBwrapFailure('', true).fix).toMatch(/apt-get install bubblewrap/)
    expect(explainBwrapFailure('bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces', false).fix).toMatch(/unprivileged_userns_clone/)
    expect(explainBwrapFailure('bwrap: setting up uid map: Permission denied', false).fix).toMatch(/apparmor_restrict_unprivileged_userns/)
  })
  it('say when no Docker engine answers', () => {
    expect(explainDockerFailure('Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?', false).reason).toMatch(/no Docker engine/)
    expect(explainDockerFailure('', true).reason).toMatch(/not installed/)
  })
})
