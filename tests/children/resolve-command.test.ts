import { describe, expect, it } from 'vitest'
import { resolveCommand, type CommandHost } from '../../src/children/resolve-command.js'

function host(files: string[], over: Partial<CommandHost> = {}): CommandHost {
  const set = new Set(files)
  return {
    platform: 'linux',
    nodePath: '/opt/node/bin/node',
    env: { PATH: '/usr/bin:/bin' },
    exists: (f) => set.has(f),
    ...over,
  }
}

/** A Windows host: files are matched without regard to case, as NTFS does. */
function win(files: string[], env: Record<string, string>, nodePath?: string): CommandHost {
  const set = new Set(files.map((f) => f.toLowerCase()))
  return { platform: 'win32', nodePath, env, exists: (f) => set.has(f.toLowerCase()) }
}

describe('resolveCommand', () => {
  it('resolves node to the running Node.js', () => {
    expect(resolveCommand('node', ['x.js'], host([]))).toEqual({
      command: '/opt/node/bin/node',
      args: ['x.js'],
      resolvedFrom: 'node',
    })
  })

  it('resolves npx beside node first, then on PATH', () => {
    expect(resolveCommand('npx', ['-y', 'pkg'], host(['/opt/node/bin/npx', '/usr/bin/npx'])).command).toBe(
      '/opt/node/bin/npx',
    )
    expect(resolveCommand('npx', ['-y', 'pkg'], host(['/usr/bin/npx'])).command).toBe('/usr/bin/npx')
    expect(resolveCommand('npm', [], host([])).command).toBe('npm')
  })

  it('finds node on PATH inside a single executable', () => {
    expect(resolveCommand('node', [], host(['/bin/node'], { nodePath: undefined })).command).toBe('/bin/node')
  })

  it('leaves absolute paths, relative paths and other commands alone (not on Windows)', () => {
    expect(resolveCommand('/usr/local/bin/node', ['a'], host([]))).toEqual({
      command: '/usr/local/bin/node',
      args: ['a'],
    })
    expect(resolveCommand('./server', [], host([]))).toEqual({ command: './server', args: [] })
    expect(resolveCommand('uvx', ['mcp-server-git'], host(['/usr/bin/uvx']))).toEqual({
      command: 'uvx',
      args: ['mcp-server-git'],
    })
  })
})

describe('resolveCommand on Windows (as cmd.exe finds commands)', () => {
  const env = {
    Path: 'C:\\Windows\\system32;"C:\\Program Files\\tools";;C:\\Users\\me\\AppData\\Roaming\\npm',
    PATHEXT: '.COM;.EXE;.BAT;.CMD',
    ComSpec: 'C:\\Windows\\system32\\cmd.exe',
  }

  it('runs npm and npx through node and their cli.js (no .cmd, no cmd.exe)', () => {
    const h = win(
      ['C:\\node\\node_modules\\npm\\bin\\npx-cli.js', 'C:\\node\\npx.cmd'],
      { Path: 'C:\\node' },
      'C:\\node\\node.exe',
    )
    expect(resolveCommand('npx', ['-y', 'pkg'], h)).toEqual({
      command: 'C:\\node\\node.exe',
      args: ['C:\\node\\node_modules\\npm\\bin\\npx-cli.js', '-y', 'pkg'],
      resolvedFrom: 'npx',
      resolvedTo: 'C:\\node\\node.exe C:\\node\\node_modules\\npm\\bin\\npx-cli.js',
    })
    expect(resolveCommand('NPX.cmd', [], h).command).toBe('C:\\node\\node.exe')
  })

  it('inside a single executable finds node.exe on Path, and npm’s cli.js beside it', () => {
    const h = win(
      ['C:\\Program Files\\nodejs\\node.exe', 'C:\\Program Files\\nodejs\\node_modules\\npm\\bin\\npm-cli.js'],
      { PATH: 'C:\\Windows;C:\\Program Files\\nodejs' },
    )
    expect(resolveCommand('node', ['s.js'], h)).toMatchObject({
      command: 'C:\\Program Files\\nodejs\\node.exe',
      args: ['s.js'],
    })
    expect(resolveCommand('npm', ['exec'], h).args).toEqual([
      'C:\\Program Files\\nodejs\\node_modules\\npm\\bin\\npm-cli.js',
      'exec',
    ])
  })

  it('looks a bare name up on Path (any case of the name), folder by folder, with PATHEXT in its order', () => {
    const h = win(
      [
        'C:\\Program Files\\tools\\uvx.exe',
        'C:\\Program Files\\tools\\uvx.cmd',
        'C:\\Users\\me\\AppData\\Roaming\\npm\\uvx.exe',
      ],
      env,
    )
    expect(resolveCommand('uvx', ['mcp-server-git'], h)).toEqual({
      command: 'C:\\Program Files\\tools\\uvx.exe',
      args: ['mcp-server-git'],
      resolvedFrom: 'uvx',
    })
    const pathext = win(['C:\\Program Files\\tools\\uvx.exe', 'C:\\Program Files\\tools\\uvx.cmd'], {
      ...env,
      PATHEXT: '.CMD;.EXE',
    })
    expect(resolveCommand('uvx', [], pathext).resolvedTo).toBe(
      'C:\\Program Files\\tools\\uvx.cmd, run through C:\\Windows\\system32\\cmd.exe /d /s /c',
    )
  })

  it('never takes an extensionless file (npm puts a shell script beside each .cmd)', () => {
    const h = win(['C:\\Users\\me\\AppData\\Roaming\\npm\\srv', 'C:\\Users\\me\\AppData\\Roaming\\npm\\srv.cmd'], env)
    expect(resolveCommand('srv', [], h).command).toBe('C:\\Windows\\system32\\cmd.exe')
    expect(resolveCommand('srv', [], win(['C:\\Users\\me\\AppData\\Roaming\\npm\\srv'], env))).toEqual({
      command: 'srv',
      args: [],
    })
  })

  it('takes a name with an extension as it is first, then with PATHEXT', () => {
    const h = win(['C:\\Windows\\system32\\srv.v2.exe', 'C:\\Program Files\\tools\\srv.cmd'], env)
    expect(resolveCommand('srv.v2', [], h).command).toBe('C:\\Windows\\system32\\srv.v2.exe')
    expect(resolveCommand('srv.cmd', ['a'], h)).toMatchObject({
      command: 'C:\\Windows\\system32\\cmd.exe',
      resolvedFrom: 'srv.cmd',
    })
  })

  it('resolves absolute and relative paths, with or without their extension (relative to the child’s folder)', () => {
    const h = win(['C:\\srv\\server.exe', 'C:\\cfg\\bin\\shim.cmd', 'D:\\x\\run.bat'], env)
    expect(resolveCommand('C:\\srv\\server.exe', [], h)).toEqual({ command: 'C:\\srv\\server.exe', args: [] })
    expect(resolveCommand('C:/srv/server', [], h)).toEqual({
      command: 'C:\\srv\\server.exe',
      args: [],
      resolvedFrom: 'C:/srv/server',
    })
    expect(resolveCommand('bin\\shim', ['x'], h, 'C:\\cfg')).toMatchObject({
      args: ['/d', '/s', '/c', '"^"C:\\cfg\\bin\\shim.cmd^" ^^^"x^^^""'],
      windowsVerbatimArguments: true,
    })
    expect(resolveCommand('.\\bin\\shim.cmd', [], h, 'C:\\cfg').resolvedTo).toMatch(
      /^C:\\cfg\\bin\\shim\.cmd, run through/,
    )
    expect(resolveCommand('D:\\x\\run', [], h).args).toEqual(['/d', '/s', '/c', '"^"D:\\x\\run.bat^""'])
    expect(resolveCommand('C:\\nowhere\\srv', ['a'], h)).toEqual({ command: 'C:\\nowhere\\srv', args: ['a'] })
  })

  it('runs a .cmd through cmd.exe /d /s /c with verbatim arguments; cmd.exe from ComSpec (any case), else cmd.exe', () => {
    const h = win(['C:\\Users\\me\\AppData\\Roaming\\npm\\mcp-srv.cmd'], env)
    expect(resolveCommand('mcp-srv', ['--root', 'C:\\My Files', '50%'], h)).toEqual({
      command: 'C:\\Windows\\system32\\cmd.exe',
      args: [
        '/d',
        '/s',
        '/c',
        '"^"C:\\Users\\me\\AppData\\Roaming\\npm\\mcp-srv.cmd^" ^^^"--root^^^" ^^^"C:\\My^^^ Files^^^" ^^^"50^^^%^^^""',
      ],
      windowsVerbatimArguments: true,
      resolvedFrom: 'mcp-srv',
      resolvedTo:
        'C:\\Users\\me\\AppData\\Roaming\\npm\\mcp-srv.cmd, run through C:\\Windows\\system32\\cmd.exe /d /s /c',
    })
    const { ComSpec: _, ...noComspec } = env
    expect(
      resolveCommand('mcp-srv', [], win(['C:\\Users\\me\\AppData\\Roaming\\npm\\mcp-srv.cmd'], noComspec)).command,
    ).toBe('cmd.exe')
  })

  it('refuses an argument with a line break for a .cmd (cmd.exe would cut the line there)', () => {
    const h = win(['C:\\Users\\me\\AppData\\Roaming\\npm\\mcp-srv.cmd'], env)
    expect(() => resolveCommand('mcp-srv', ['a\nb'], h)).toThrow(
      /mcp-srv\.cmd runs through cmd\.exe, which cannot pass an argument with a line break/,
    )
  })

  it('leaves a command found nowhere as it is (spawn reports it: command not found)', () => {
    expect(resolveCommand('missing', ['a'], win([], env))).toEqual({ command: 'missing', args: ['a'] })
  })
})
