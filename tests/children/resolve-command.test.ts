import { describe, expect, it } from 'vitest'
import { resolveCommand, type CommandHost } from '../../src/children/resolve-command.js'

function host(files: string[], over: Partial<CommandHost> = {}): CommandHost {
  const set = new Set(files)
  return { platform: 'linux', nodePath: '/opt/node/bin/node', pathEnv: '/usr/bin:/bin', exists: (f) => set.has(f), ...over }
}

describe('resolveCommand', () => {
  it('resolves node to the running Node.js', () => {
    expect(resolveCommand('node', ['x.js'], host([]))).toEqual({ command: '/opt/node/bin/node', args: ['x.js'], resolvedFrom: 'node' })
  })

  it('resolves npx beside node first, then on PATH', () => {
    expect(resolveCommand('npx', ['-y', 'pkg'], host(['/opt/node/bin/npx', '/usr/bin/npx'])).command).toBe('/opt/node/bin/npx')
    expect(resolveCommand('npx', ['-y', 'pkg'], host(['/usr/bin/npx'])).command).toBe('/usr/bin/npx')
    expect(resolveCommand('npm', [], host([])).command).toBe('npm')
  })

  it('finds node on PATH inside a single executable', () => {
    expect(resolveCommand('node', [], host(['/bin/node'], { nodePath: undefined })).command).toBe('/bin/node')
  })

  it('leaves absolute paths, relative paths and other commands alone', () => {
    expect(resolveCommand('/usr/local/bin/node', ['a'], host([]))).toEqual({ command: '/usr/local/bin/node', args: ['a'] })
    expect(resolveCommand('./server', [], host([]))).toEqual({ command: './server', args: [] })
    expect(resolveCommand('uvx', ['mcp-server-git'], host(['/usr/bin/uvx']))).toEqual({ command: 'uvx', args: ['mcp-server-git'] })
  })

  it('runs npm and npx through node and their cli.js on Windows (no .cmd without a shell)', () => {
    const win = host(['C:\\node\\node_modules\\npm\\bin\\npx-cli.js'], { platform: 'win32', nodePath: 'C:\\node\\node.exe', pathEnv: 'C:\\Windows' })
    expect(resolveCommand('npx', ['-y', 'pkg'], win)).toEqual({ command: 'C:\\node\\node.exe', args: ['C:\\node\\node_modules\\npm\\bin\\npx-cli.js', '-y', 'pkg'], resolvedFrom: 'npx' })
    expect(resolveCommand('npx.cmd', [], win).command).toBe('C:\\node\\node.exe')
  })

  it('uses PATHEXT on Windows', () => {
    const win = host(['C:\\tools\\npx.cmd'], { platform: 'win32', nodePath: undefined, pathEnv: 'C:\\tools', pathExt: '.EXE;.CMD' })
    expect(resolveCommand('npx', [], win).command).toBe('C:\\tools\\npx.cmd')
  })
})
