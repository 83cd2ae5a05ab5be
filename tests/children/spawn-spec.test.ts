import path from 'node:path'
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio'
import { describe, expect, it } from 'vitest'
import { inheritedEnvironment, sameSpawn, stdioSpawnSpec } from '../../src/children/spawn-spec.js'
import type { CommandHost } from '../../src/children/resolve-command.js'
import type { StdioServerConfig } from '../../src/config/schema.js'

const host: CommandHost = { platform: 'linux', nodePath: '/opt/node/bin/node', pathEnv: '/usr/bin', exists: () => false }

describe('stdio spawn specs', () => {
  it('inherit exactly the variables the MCP SDK passes on', () => {
    expect(inheritedEnvironment()).toEqual(getDefaultEnvironment())
    expect(inheritedEnvironment({ HOME: '/h', SECRET: 's', SHELL: '() { evil; }' })).toEqual({ HOME: '/h' })
  })

  it('resolve the command, add the config env over the inherited one, and read cwd from the config’s folder', () => {
    const config = { type: 'stdio', command: 'node', args: ['server.js'], env: { HOME: '/mine', TOKEN: 't' }, cwd: 'sub' } as unknown as StdioServerConfig
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
})
