import { describe, expect, it } from 'vitest'
import { ShellGuard } from '../../src/sandbox/guard/guard.js'
import { braceExpand, zoneOf } from '../../src/sandbox/guard/paths.js'

const guard = new ShellGuard()

describe('shell guard: the workspace (check(input, { cwd }))', () => {
  const cwd = '/home/u/proj'
  const cases: Array<[string, { cwd?: string }, boolean]> = [
    ['rm -rf /home/u/proj/build', { cwd }, true],
    ['rm -rf /home/u/proj/build', {}, false],
    ['rm -rf /home/u/proj', { cwd }, false],
    ['rm -rf /home/u/proj/../other', { cwd }, false],
    ['rm -rf ../other', { cwd }, false],
    ['cd /home/u/proj/src && rm -rf *', { cwd }, true],
    ['cd / && rm -rf home/u/proj/dist', { cwd }, true],
    ['rm -rf /etc/nginx', { cwd }, false],
    ['echo x > /home/u/proj/out.txt', { cwd }, true],
    ['echo x > /home/u/notes.txt', { cwd }, false],
    // A workspace at / or a system folder makes nothing outside scratch "inside".
    ['rm -rf /etc/nginx', { cwd: '/' }, false],
    ['rm -rf /usr/lib', { cwd: '/usr' }, false],
  ]
  it.each(cases)('%j with %j → allowed %s', async (command, opts, allowed) => {
    expect((await guard.check(command, opts)).ok).toBe(allowed)
  })

  it('takes the workspace for argument vectors too', async () => {
    expect(await guard.check(['rm', '-rf', '/home/u/proj/build'], { cwd })).toMatchObject({ ok: true })
    expect(await guard.check(['rm', '-rf', '/home/u/proj/build'])).toMatchObject({
      ok: false,
      error: { rule: 'delete-outside-workspace' },
    })
    expect(await guard.check(['python3', '-c', 'import shutil; shutil.rmtree("/opt/app")'])).toMatchObject({
      ok: false,
      error: { rule: 'delete-outside-workspace' },
    })
  })
})

describe('path zones and brace expansion', () => {
  it.each([
    ['build', '.', 'inside'],
    ['./a/../b', '.', 'inside'],
    ['../x', '.', 'outside'],
    ['/tmp/x', '.', 'scratch'],
    ['/tmp', '.', 'outside'],
    ['/dev/null', '.', 'scratch'],
    ['*', '/', 'outside'],
    ['*', 'src', 'inside'],
    ['.*', '.', 'outside'],
    ['~', '.', 'outside'],
    ['~-', '.', 'unknown'],
    ['x', null, 'unknown'],
  ] as const)('%s from %s is %s', (value, wd, zone) => {
    expect(zoneOf(value, wd)).toBe(zone)
  })

  it('expands braces as bash does', () => {
    expect(braceExpand('/{etc,usr}')).toEqual(['/etc', '/usr'])
    expect(braceExpand('a{1..3}')).toEqual(['a1', 'a2', 'a3'])
    expect(braceExpand('{a,b}{c,d}')).toEqual(['ac', 'ad', 'bc', 'bd'])
    expect(braceExpand('x{}')).toEqual(['x{}'])
    expect(braceExpand('/{usr,{etc,var}/x}')).toEqual(['/usr', '/etc/x', '/var/x'])
  })

  it('caps a brace expansion that would explode (the guard then treats the word as unknown)', () => {
    // 2^30 words uncapped: this would not end in the test's time, let alone its memory.
    expect(braceExpand('{a,b}'.repeat(30))).toHaveLength(257)
  })
})
