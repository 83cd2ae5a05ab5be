import { writeFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { connectToMyc, isAlive, writeConfig } from '../helpers/e2e.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'

describe('myc serve (build/myc.cjs) reloads its config', () => {
  const file = writeConfig({ mcpServers: { a: fixtureEntry('echo') } })
  let close: (() => Promise<void>) | undefined
  afterAll(async () => {
    await close?.()
  })

  it('on a save (new servers listed, list_changed sent, the others untouched) and on SIGHUP (which does not stop it)', async () => {
    const { client, transport } = await connectToMyc(['serve', '--config', file])
    close = () => client.close()
    let stderr = ''
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    let listChanged = 0
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      listChanged++
    })
    const names = async () => (await client.listTools()).tools.map((t) => t.name)
    expect(await names()).toContain('a__echo')

    writeFileSync(file, JSON.stringify({ mcpServers: { a: fixtureEntry('echo'), b: fixtureEntry('echo') } }))
    await waitFor(async () => (await names()).includes('b__echo'), 15_000, 'the new server after a save')
    expect(listChanged).toBeGreaterThan(0)
    expect(
      JSON.stringify((await client.callTool({ name: 'a__echo', arguments: { message: 'still here' } })).content),
    ).toContain('still here')

    // A broken save: logged with the file and key, the running config kept.
    writeFileSync(file, JSON.stringify({ mcpServers: { a: fixtureEntry('echo'), b: { command: '' } } }))
    await waitFor(() => stderr.includes('config not reloaded'), 15_000, 'the refused reload')
    expect(stderr).toMatch(/mcpServers\.b\.command/)
    expect(await names()).toContain('b__echo')

    process.kill(transport.pid!, 'SIGHUP')
    await waitFor(() => stderr.includes('SIGHUP: reloading the config'), 15_000, 'the SIGHUP reload')
    expect(isAlive(transport.pid!)).toBe(true)
    expect(await names()).toContain('a__echo')
  }, 60_000)
})
