import { describe, expect, it } from 'vitest'
import { bubblewrapArgs } from '../../src/sandbox/bubblewrap-args.js'
import { dockerRunArgs } from '../../src/sandbox/docker-args.js'
import { explainBwrapFailure, explainDockerFailure } from '../../src/sandbox/probe.js'
import { sandboxExecArgs, seatbeltProfile } from '../../src/sandbox/seatbelt-profile.js'

const HOSTILE = [
  '/w/with space',
  '/w/quote"s',
  "/w/apo'strophe",
  '/w/paren(s)',
  '/w/new\nline',
  '/w/semi;colon',
  '/w/$(rm -rf ~)',
  '/w/back`tick`',
]

describe('bubblewrap arguments', () => {
  it('are exactly these for sandboxed: masks after the workspace, the hidden folders made read-only last', () => {
    const masks = [
      { path: '/ws/.git', kind: 'read-only' as const },
      { path: '/ws/mycelium.config.json', kind: 'hide-file' as const },
      { path: '/ws/skills', kind: 'hide-dir' as const },
    ]
    expect(
      bubblewrapArgs({
        trust: 'sandboxed',
        workspace: '/ws',
        home: '/home/u',
        masks,
        emptyFile: '/e/empty',
        exposeFile: '/ws/skills/a/scripts/x.sh',
        env: { FOO: 'bar' },
        argv: ['sh', '-c', 'make'],
      }),
    ).toEqual([
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--cap-drop',
      'ALL',
      '--die-with-parent',
      '--new-session',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/run',
      '--tmpfs',
      '/home/u',
      '--bind',
      '/ws',
      '/ws',
      '--ro-bind',
      '/ws/.git',
      '/ws/.git',
      '--ro-bind',
      '/e/empty',
      '/ws/mycelium.config.json',
      '--tmpfs',
      '/ws/skills',
      '--ro-bind',
      '/ws/skills/a/scripts/x.sh',
      '/ws/skills/a/scripts/x.sh',
      '--remount-ro',
      '/ws/skills',
      '--clearenv',
      '--setenv',
      'FOO',
      'bar',
      '--setenv',
      'HOME',
      '/home/u',
      '--setenv',
      'LANG',
      'C.UTF-8',
      '--setenv',
      'PATH',
      '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--setenv',
      'TMPDIR',
      '/tmp',
      '--chdir',
      '/ws',
      '--',
      'sh',
      '-c',
      'make',
    ])
  })

  it('bind the workspace read-only for restricted, and still hide myc’s state', () => {
    const args = bubblewrapArgs({
      trust: 'restricted',
      workspace: '/ws',
      home: '/home/u',
      masks: [{ path: '/ws/skills', kind: 'hide-dir' }],
      env: {},
      argv: ['python3', 'x.py'],
    })
    expect(args.join(' ')).toContain('--ro-bind /ws /ws --tmpfs /ws/skills --remount-ro /ws/skills')
    expect(args).not.toContain('--bind')
    expect(args.slice(-4)).toEqual(['/ws', '--', 'python3', 'x.py'])
  })

  it('leave out masks in the fresh home outside the workspace, and keep those inside it', () => {
    const args = bubblewrapArgs({
      trust: 'sandboxed',
      workspace: '/home/u/proj',
      home: '/home/u',
      masks: [
        { path: '/home/u/.config/mycelium', kind: 'hide-dir' },
        { path: '/home/u/proj/.mycelium', kind: 'hide-dir' },
        { path: '/srv/state/mycelium', kind: 'hide-dir' },
      ],
      env: {},
      argv: ['true'],
    })
    expect(args.join(' ')).toContain(
      '--tmpfs /home/u --bind /home/u/proj /home/u/proj --tmpfs /home/u/proj/.mycelium --tmpfs /srv/state/mycelium --remount-ro',
    )
    expect(args).not.toContain('/home/u/.config/mycelium')
  })

  it('make no fresh home over a home folder the workspace holds (its start-up files are masked instead)', () => {
    const args = (home: string) =>
      bubblewrapArgs({ trust: 'sandboxed', workspace: '/ws', home, masks: [], env: {}, argv: ['true'] })
    for (const home of ['/ws', '/ws/home/alice'])
      expect(args(home).filter((a, i, all) => all[i - 1] === '--tmpfs')).toEqual(['/tmp', '/run'])
    expect(args('/wsx/alice').join(' ')).toContain('--tmpfs /wsx/alice --bind /ws /ws')
  })

  it('bind a pinned folder onto itself, as writable as the workspace', () => {
    const masks = [
      { path: '/ws/proj', kind: 'pin' as const },
      { path: '/ws/proj/skills', kind: 'hide-dir' as const },
    ]
    const at = (trust: 'sandboxed' | 'restricted') =>
      bubblewrapArgs({ trust, workspace: '/ws', home: '/h', masks, env: {}, argv: ['true'] }).join(' ')
    expect(at('sandboxed')).toContain('--bind /ws /ws --bind /ws/proj /ws/proj --tmpfs /ws/proj/skills')
    expect(at('restricted')).toContain('--ro-bind /ws /ws --ro-bind /ws/proj /ws/proj --tmpfs /ws/proj/skills')
  })

  it('keep hostile path names as single arguments', () => {
    for (const p of HOSTILE) {
      const args = bubblewrapArgs({ trust: 'sandboxed', workspace: p, home: '/h', masks: [], env: {}, argv: ['true'] })
      expect(args.filter((a) => a === p)).toHaveLength(3)
      expect(args.filter((a) => a.includes(p) && a !== p)).toEqual([])
    }
  })
})

describe('Seatbelt profile', () => {
  it('denies by default, writes only where allowed, and has no network rule', () => {
    const profile = seatbeltProfile({
      trust: 'sandboxed',
      hidden: ['/ws/skills', '/ws/.mycelium'],
      readOnly: ['/ws/.git'],
    })
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
(deny file-read* file-write* (subpath (param "HIDDEN_0")))
(deny file-read* file-write* (subpath (param "HIDDEN_1")))
(deny file-write* (subpath (param "READONLY_0")))
`)
    expect(profile).not.toMatch(/network/)
    expect(seatbeltProfile({ trust: 'restricted', hidden: [], readOnly: [] })).not.toContain('WORKSPACE')
    const args = sandboxExecArgs({
      trust: 'sandboxed',
      workspace: '/ws',
      tmpdir: '/t',
      hidden: ['/ws/skills', '/ws/.mycelium'],
      readOnly: ['/ws/.git'],
      exposeFile: '/ws/skills/a/scripts/x.sh',
      argv: ['sh', 'x'],
    })
    expect(args.filter((_, i) => args[i - 1] === '-D')).toEqual([
      'WORKSPACE=/ws',
      'TMPDIR=/t',
      'HIDDEN_0=/ws/skills',
      'HIDDEN_1=/ws/.mycelium',
      'READONLY_0=/ws/.git',
      'SCRIPT=/ws/skills/a/scripts/x.sh',
    ])
    // The script is allowed after the denial (later rules win in Seatbelt).
    expect(args[1]!.indexOf('(allow file-read* (literal (param "SCRIPT")))')).toBeGreaterThan(
      args[1]!.indexOf('HIDDEN_1'),
    )
  })

  it('denies writes to a pinned folder itself (a rename, a removal), not to what is in it', () => {
    const input = { trust: 'sandboxed' as const, hidden: ['/ws/proj/skills'], readOnly: [], pinned: ['/ws/proj'] }
    expect(seatbeltProfile(input)).toContain(
      '(deny file-read* file-write* (subpath (param "HIDDEN_0")))\n(deny file-write* (literal (param "PIN_0")))\n',
    )
    const args = sandboxExecArgs({ ...input, workspace: '/ws', tmpdir: '/t', argv: ['true'] })
    expect(args.filter((_, i) => args[i - 1] === '-D')).toContain('PIN_0=/ws/proj')
  })

  it('opens only the filtering proxy’s loopback port when there is an allow-list', () => {
    const profile = seatbeltProfile({ trust: 'sandboxed', hidden: [], readOnly: [], proxyPort: 41234 })
    expect(profile.endsWith('(allow network-outbound (remote ip "localhost:41234"))\n')).toBe(true)
    expect(profile.match(/network/g)).toHaveLength(1)
    expect(
      sandboxExecArgs({
        trust: 'sandboxed',
        workspace: '/w',
        tmpdir: '/t',
        hidden: [],
        readOnly: [],
        argv: ['curl', 'x'],
        proxyPort: 41234,
      })[1],
    ).toBe(profile)
  })

  it('passes paths only as -D parameters, never inside the profile', () => {
    for (const p of HOSTILE) {
      const args = sandboxExecArgs({
        trust: 'sandboxed',
        workspace: p,
        tmpdir: '/t',
        hidden: [p],
        readOnly: [p],
        exposeFile: p,
        argv: ['true'],
      })
      expect(args[1]).toBe(seatbeltProfile({ trust: 'sandboxed', hidden: [p], readOnly: [p], exposeFile: p }))
      expect(args[1]).not.toContain(p)
      expect(args).toContain(`WORKSPACE=${p}`)
      expect(args.slice(-2)).toEqual(['--', 'true'])
    }
  })
})

describe('docker arguments', () => {
  it('are exactly these', () => {
    expect(
      dockerRunArgs({
        trust: 'sandboxed',
        name: 'myc-abc',
        image: 'node:22',
        workspace: '/ws',
        uid: 1000,
        gid: 1000,
        env: { B: '2', A: '1' },
        argv: ['npm', 'test'],
      }),
    ).toEqual([
      'run',
      '--rm',
      '--init',
      '--name',
      'myc-abc',
      '--network',
      'none',
      '--read-only',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--pids-limit',
      '256',
      '--memory',
      '1g',
      '--cpus',
      '1',
      '--user',
      '1000:1000',
      '--tmpfs',
      '/tmp:rw,nosuid,nodev,size=256m',
      '--mount',
      'type=bind,source=/ws,target=/workspace',
      '--workdir',
      '/workspace',
      '--env',
      'A=1',
      '--env',
      'B=2',
      '--',
      'node:22',
      'npm',
      'test',
    ])
  })

  it('mask myc’s state and the read-only paths under /workspace, and move the exposed script with it', () => {
    const masks = [
      { path: '/ws/.git', kind: 'read-only' as const },
      { path: '/ws/mycelium.config.json', kind: 'hide-file' as const },
      { path: '/ws/skills', kind: 'hide-dir' as const },
      { path: '/ws/cfg', kind: 'pin' as const },
      { path: '/ws/cfg/xdg', kind: 'hide-dir' as const },
      { path: '/elsewhere/memory', kind: 'hide-dir' as const },
    ]
    const args = dockerRunArgs({
      trust: 'sandboxed',
      name: 'n',
      image: 'i',
      workspace: '/ws',
      uid: 1,
      gid: 1,
      env: {},
      argv: ['x'],
      masks,
      emptyFile: '/e/empty',
      exposeFile: '/ws/skills/a/scripts/x.sh',
    })
    expect(args.filter((_, i) => args[i - 1] === '--mount')).toEqual([
      'type=bind,source=/ws,target=/workspace',
      'type=bind,source=/ws/.git,target=/workspace/.git,readonly',
      'type=bind,source=/e/empty,target=/workspace/mycelium.config.json,readonly',
      'type=tmpfs,destination=/workspace/skills,tmpfs-mode=0555',
      'type=bind,source=/ws/cfg,target=/workspace/cfg',
      'type=tmpfs,destination=/workspace/cfg/xdg,tmpfs-mode=0555',
      'type=bind,source=/ws/skills/a/scripts/x.sh,target=/workspace/skills/a/scripts/x.sh,readonly',
    ])
  })

  it('mount read-only for restricted and never the Docker socket', () => {
    const args = dockerRunArgs({
      trust: 'restricted',
      name: 'n',
      image: 'i',
      workspace: '/ws',
      uid: 1,
      gid: 1,
      env: {},
      argv: ['x'],
    })
    expect(args).toContain('type=bind,source=/ws,target=/workspace,readonly')
    expect(args.join(' ')).not.toMatch(/docker\.sock/)
  })
})

describe('probe explanations', () => {
  it('say how to fix a missing bwrap, disabled user namespaces and the AppArmor case', () => {
    expect(explainBwrapFailure('', true).fix).toMatch(/apt-get install bubblewrap/)
    expect(
      explainBwrapFailure(
        'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces',
        false,
      ).fix,
    ).toMatch(/unprivileged_userns_clone/)
    expect(explainBwrapFailure('bwrap: setting up uid map: Permission denied', false).fix).toMatch(
      /apparmor_restrict_unprivileged_userns/,
    )
  })
  it('say when no Docker engine answers', () => {
    expect(
      explainDockerFailure(
        'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?',
        false,
      ).reason,
    ).toMatch(/no Docker engine/)
    expect(explainDockerFailure('', true).reason).toMatch(/not installed/)
  })
})
