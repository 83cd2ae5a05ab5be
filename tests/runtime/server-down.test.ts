import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load.js'
import { Cancellation } from '../../src/protocol/cancellation.js'
import type { PrincipalView } from '../../src/principal/view.js'
import { callVisibleTool } from '../../src/runtime/principal-tools.js'
import { connectClient, PolicyHarness, waitFor } from '../helpers/runtime.js'
import { fixtureServer } from '../helpers/fixtures.js'

/**
 * A server that is down (restarting, starting again, given up) answers a
 * call of a tool the caller sees with a tool error naming the server, its
 * state and when it starts again; a tool the caller does not see answers
 * exactly as one that never existed. Real children, a real policy.
 */
describe('calls to a server that is down', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'myc-down-'))
  const gate = path.join(dir, 'gate')
  const h = new PolicyHarness(() => loadConfig({ cwd: dir, env: {} }))
  let view: PrincipalView

  beforeAll(async () => {
    writeFileSync(gate, '')
    const server = (fixture: string, restart: Record<string, number>, env: Record<string, string> = {}) => ({
      command: process.execPath,
      args: [fixtureServer(fixture)],
      env,
      restart,
    })
    writeFileSync(
      path.join(dir, 'mycelium.config.json'),
      JSON.stringify({
        mcpServers: {
          // Restarts at once, but its start waits for the gate file.
          gated: server('gated-start', { maxRetries: 3, initialDelayMs: 1, maxDelayMs: 1 }, { START_GATE: gate }),
          // Its restart is planned far away: it stays "restarting" for the whole test.
          later: server('crash', { maxRetries: 2, initialDelayMs: 600_000, maxDelayMs: 600_000 }),
          // No restarts at all.
          once: server('crash', { maxRetries: 0, initialDelayMs: 1, maxDelayMs: 1 }),
        },
        roles: { default: 'dev' },
      }),
    )
    mkdirSync(path.join(dir, 'skills', 'work'), { recursive: true })
    // Every server's echo and crash; their pid tools stay hidden.
    writeFileSync(
      path.join(dir, 'skills', 'work', 'SKILL.md'),
      '---\nname: work\ndescription: work\nallowedRoles: [dev]\nallowedTools: [gated:echo, gated:crash, later:echo, later:crash, once:echo, once:crash]\n---\n',
    )
    await h.start()
    view = await h.view('dev', { skills: ['work'] })
  }, 30_000)
  afterAll(async () => {
    await h.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const call = async (name: string) => {
    const called = await callVisibleTool(
      h.runtime,
      view,
      { name, arguments: { message: 'hi' } },
      { cancellation: new Cancellation(), builtin: () => ({ signal: new AbortController().signal }) },
    )
    return called!
  }
  const text = (called: Awaited<ReturnType<typeof call>>) =>
    called.outcome.ok ? (called.outcome.result as { content: Array<{ text: string }> }).content[0]!.text : ''
  const crash = async (server: string) => {
    const crashed = await call(`${server}__crash`)
    expect(text(crashed)).toMatch(new RegExp(`Server "${server}" stopped before answering`))
    expect(crashed.down).toBe(true)
    await waitFor(() => h.runtime.supervisor.children.get(server)!.state !== 'RUNNING', 5_000, `${server} to go down`)
  }

  it('says a restarting server is restarting, and when it starts again', async () => {
    await crash('later')
    const called = await call('later__echo')
    expect(called.outcome.ok).toBe(true)
    expect(called.outcome.ok && called.outcome.result.isError).toBe(true)
    expect(called.down).toBe(true)
    expect(called.server).toBe('later')
    expect(text(called)).toMatch(
      /^Server "later" is restarting \(exited with code 3\): its next start is in about \d+ s \(attempt 1 of 2\)\. The call was not sent to it\./,
    )
    // Its tools left the list meanwhile (a client was told with list_changed).
    expect(h.runtime.catalogue.tools().some((t) => t.server === 'later')).toBe(false)
  })

  it('answers a hidden tool of a down server exactly as one that never existed', async () => {
    const answer = async (name: string) =>
      JSON.stringify((await call(name)).outcome)
        .split(name)
        .join('<NAME>')
    const never = await answer('later__zz_never_existed')
    expect(never).toContain('Unknown tool: <NAME>')
    expect(await answer('later__pid')).toBe(never)
    // The same through the MCP server face.
    const { client } = await connectClient(h.runtime, { view })
    const viaClient = async (name: string) =>
      client.callTool({ name, arguments: {} }).then(
        (r) => JSON.stringify(r),
        (e: Error) => e.message.split(name).join('<NAME>'),
      )
    expect(await viaClient('later__pid')).toBe(await viaClient('later__zz_never_existed'))
    expect(await viaClient('later__echo')).toMatch(/Server \\"later\\" is restarting/)
    await client.close()
  })

  it('says a server starting again is starting, then calls it once it is up', async () => {
    rmSync(gate)
    await crash('gated')
    await waitFor(
      () => h.runtime.supervisor.restartUnderWay('gated') !== undefined,
      5_000,
      'gated to be starting again (held by its gate)',
    )
    expect(text(await call('gated__echo'))).toMatch(
      /^Server "gated" is starting again \(attempt 1 of 3\): it has up to \d+ ms \(startupTimeoutMs\)\. The call was not sent to it\. Call the tool again in a few seconds\./,
    )
    writeFileSync(gate, '')
    await waitFor(() => h.runtime.supervisor.children.get('gated')!.state === 'RUNNING', 10_000, 'gated to be up')
    const again = await call('gated__echo')
    expect(text(again)).toBe('hi')
    expect(again.down).toBeUndefined()
  })

  it('says a server whose restarts are used up is not restarted', async () => {
    await crash('once')
    const called = await call('once__echo')
    expect(called.down).toBe(true)
    expect(text(called)).toMatch(
      /^Server "once" failed \(exited with code 3\) and is not restarted any more: its restarts are used up\. The call was not sent to it\. `myc status` shows why/,
    )
  })

  it('answers a call whose view throws with a rejection, never a throw (the call path has no async frame to catch it)', async () => {
    const broken = Object.create(view, {
      callBuiltin: {
        value: () => {
          throw new Error('the view broke')
        },
      },
    }) as PrincipalView
    let called: Promise<unknown> | undefined
    expect(() => {
      called = callVisibleTool(
        h.runtime,
        broken,
        { name: 'later__echo', arguments: {} },
        { cancellation: new Cancellation(), builtin: () => ({ signal: new AbortController().signal }) },
      )
    }).not.toThrow()
    await expect(called).rejects.toThrow('the view broke')
  })
})
