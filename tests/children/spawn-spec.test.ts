import path from 'node:path'
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio'
import { describe, expect, it } from 'vitest'
import { describeResolution, inheritedEnvironment, sameSpawn, stdioSpawnSpec } from '../../src/children/spawn-spec.js'
import type { CommandHost } from '../../src/children/resolve-command.js'
import type { StdioServerConfig } from '../../src/config/server-schema.js'

const host: CommandHost = {
  platform: 'linux',
  nodePath: '/opt/node/bin/node',
  env: { PATH: '/usr/bin' },
  exists: () => false,
}

describe('stdio spawn specs', () => {
  it('inherit exactly the variables the MCP SDK passes on', () => {
    expect(inheritedEnvironment()).toEqual(getDefaultEnvironment())
    expect(inheritedEnvironment({ HOME: '/h', SECRET: 's', SHELL: '() { evil; }' })).toEqual({ HOME: '/h' })
  })

  it('resolve the command, add the config env over the inherited one, and read cwd from the config’s folder', () => {
    const config = {
      type: 'stdio',
      command: 'node',
      args: ['server.js'],
      env: { HOME: '/mine', TOKEN: 't' },
      cwd: 'sub',
    } as unknown as StdioServerConfig
    const spec = stdioSpawnSpec(config, host, '/cfg')
    expect(spec.cwd).toBe(path.resolve('/cfg', 'sub'))
    expect(spec.env.HOME).toBe('/mine')
    expect(spec.env.TOKEN).toBe('t')
    expect(spec.env.PATH?.split(path.delimiter)[0]).toBe('/opt/node/bin')
    expect(sameSpawn(spec, stdioSpawnSpec(config, host, '/cfg'))).toBe(true)
    expect(sameSpawn(spec, { ...spec, args: [...spec.args, '--x'] })).toBe(false)
    expect(sameSpawn(spec, { ...spec, env: { ...spec.env, TOKEN: 'other' } })).toBe(false)
    expect(sameSpawn(spec, { ...spec, env: { ...spec.env, MORE: '1' } })).toBe(false)
    expect(sameSpawn(spec, { ...spec, cwd: '/elsewhere' })).toBe(false)
  })

  it('inherit from the host’s environment, the one the command is looked up in', () => {
    const spec = stdioSpawnSpec(
      { type: 'stdio', command: 'srv', args: [], env: {} } as unknown as StdioServerConfig,
      { ...host, env: { PATH: '/stand-ins:/usr/bin', HOME: '/elsewhere', SECRET: 's' } },
      '/cfg',
    )
    expect(spec.env).toEqual({ PATH: '/opt/node/bin:/stand-ins:/usr/bin', HOME: '/elsewhere' })
  })

  it('say in the log what a command resolved to', () => {
    const spec = stdioSpawnSpec(
      { type: 'stdio', command: 'node', args: ['s.js'] } as unknown as StdioServerConfig,
      host,
      '/cfg',
    )
    expect(describeResolution(spec)).toBe('resolved "node" to /opt/node/bin/node')
    expect(
      describeResolution(
        stdioSpawnSpec({ type: 'stdio', command: '/bin/srv', args: [] } as unknown as StdioServerConfig, host, '/cfg'),
      ),
    ).toBeUndefined()
  })

  it('on Windows: look the command up on the child’s own Path (its env over myc’s, any case), read cwd as a Windows path, run a .cmd through cmd.exe verbatim', () => {
    const files = new Set(['C:\\mine\\srv.cmd', 'C:\\theirs\\srv.exe'])
    const win: CommandHost = {
      platform: 'win32',
      nodePath: undefined,
      env: { Path: 'C:\\theirs', ComSpec: 'C:\\Windows\\system32\\cmd.exe' },
      exists: (f) => files.has(f),
    }
    const config = {
      type: 'stdio',
      command: 'srv',
      args: ['a b'],
      env: { PATH: 'C:\\mine' },
      cwd: 'sub',
    } as unknown as StdioServerConfig
    const spec = stdioSpawnSpec(config, win, 'C:\\cfg')
    expect(spec).toMatchObject({
      command: 'C:\\Windows\\system32\\cmd.exe',
      args: ['/d', '/s', '/c', '"^"C:\\mine\\srv.cmd^" ^^^"a^^^ b^^^""'],
      cwd: 'C:\\cfg\\sub',
      windowsVerbatimArguments: true,
    })
    expect(describeResolution(spec)).toBe(
      'resolved "srv" to C:\\mine\\srv.cmd, run through C:\\Windows\\system32\\cmd.exe /d /s /c',
    )
    expect(sameSpawn(spec, { ...spec, windowsVerbatimArguments: undefined })).toBe(false)
    const theirs = stdioSpawnSpec({ ...config, env: {} }, win, 'C:\\cfg')
    expect(theirs).toMatchObject({ command: 'C:\\theirs\\srv.exe', args: ['a b'] })
    expect(theirs.windowsVerbatimArguments).toBeUndefined()
  })
})
