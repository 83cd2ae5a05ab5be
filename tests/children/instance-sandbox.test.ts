import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdtempSync, symlinkSync } from 'node:fs'
import type { Server } from 'node:http'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Runtime } from '../../src/runtime/runtime.js'
import { fixtureServer, repoRoot } from '../helpers/fixtures.js'
import { fixtureEntry, waitFor } from '../helpers/runtime.js'
import { firstText, peopleFace, perPersonEntry, personClient, scopedRuntime, whoami } from '../helpers/scoped.js'
import { requireTool } from '../helpers/tools.js'

const hasBwrap = requireTool('bwrap', process.platform === 'linux' && spawnSync('bwrap', ['--version']).status === 0)

/**
 * `sandbox: true` on a scoped server (docs/team.md): each instance runs
 * under bubblewrap and sees its own person's folder and no one else's; the
 * sealed secret store and myc's state are hidden from it. A probe: the
 * instance tries to read what it must not.
 */
describe.skipIf(!hasBwrap)('a sandboxed instance sees its own folder and no one else’s', () => {
  let runtime: Runtime
  let folder: string
  let server: Server
  let alice: Client
  let bob: Client
  const read = async (client: Client, file: string) =>
    JSON.parse(firstText(await client.callTool({ name: 'gh__read', arguments: { path: file } }))) as {
      ok: boolean
      text?: string
      code?: string
    }

  beforeAll(async () => {
    ;({ runtime, folder } = await scopedRuntime(
      { gh: perPersonEntry({ sandbox: true }) },
      { kept: { local: { github: 'operator' }, alice: { github: 'a' }, bob: { github: 'b' } } },
    ))
    let url: string
    ;({ url, server } = await peopleFace(runtime))
    alice = (await personClient(url, 'alice')).client
    bob = (await personClient(url, 'bob')).client
  }, 30_000)
  afterAll(async () => {
    await Promise.all([alice, bob].map((c) => c?.close().catch(() => {})))
    server?.close()
    await runtime?.close()
  })

  it('runs with its own HOME and secret, and reads and writes only its own folder', async () => {
    const a = await whoami(alice)
    const b = await whoami(bob)
    expect(a.secret).toBe('a')
    expect(b.secret).toBe('b')
    await alice.callTool({ name: 'gh__remember', arguments: { value: 'alice-cookie' } })
    await bob.callTool({ name: 'gh__remember', arguments: { value: 'bob-cookie' } })
    // Both files are there on the host...
    expect(existsSync(path.join(a.home!, 'cookie')) && existsSync(path.join(b.home!, 'cookie'))).toBe(true)
    // ...each instance reads its own, and not the other's.
    expect(await read(alice, path.join(a.home!, 'cookie'))).toEqual({ ok: true, text: 'alice-cookie' })
    expect((await read(alice, path.join(b.home!, 'cookie'))).ok).toBe(false)
    expect((await read(bob, path.join(a.home!, 'cookie'))).ok).toBe(false)
  })

  it('writes nowhere but its own folder, and runs with no capability', async () => {
    const a = await whoami(alice)
    const b = await whoami(bob)
    const write = async (client: Client, file: string) =>
      JSON.parse(firstText(await client.callTool({ name: 'gh__write', arguments: { path: file } }))) as { ok: boolean }
    expect(await write(alice, path.join(a.home!, 'mine'))).toEqual({ ok: true })
    expect(await write(alice, path.join(a.tmp!, 'scratch'))).toEqual({ ok: true })
    // Another person's HOME and the rest of the system are read-only to it.
    for (const elsewhere of [path.join(b.home!, 'planted'), path.join(repoRoot, 'planted')])
      expect((await write(alice, elsewhere)).ok, elsewhere).toBe(false)
    // Its /tmp is a new one (the test's folder, myc's state with it, lies in the host's): what it writes there stays there.
    await write(alice, path.join(folder, 'planted'))
    for (const planted of [path.join(b.home!, 'planted'), path.join(folder, 'planted'), path.join(repoRoot, 'planted')])
      expect(existsSync(planted), planted).toBe(false)
    const status = await read(alice, '/proc/self/status')
    expect(status.text).toMatch(/^CapEff:\s*0+$/m)
  })

  it('hides the sealed secret store and myc’s state (the skills) from it; the rest of the system it may read', async () => {
    const store = path.join(folder, 'config', 'mycelium', 'secrets.json')
    expect(existsSync(store)).toBe(true)
    expect(await read(alice, store)).toMatchObject({ ok: false })
    const skill = path.join(repoRoot, 'skills', 'reader', 'SKILL.md')
    expect(existsSync(skill)).toBe(true)
    expect(await read(alice, skill)).toMatchObject({ ok: false })
    expect((await read(alice, path.join(repoRoot, 'package.json'))).ok).toBe(true)
  })

  it('leaves no folder behind once its instance stops (persist is off)', async () => {
    const { home } = await whoami(alice)
    await runtime.close()
    await waitFor(() => !existsSync(path.dirname(home!)), 5_000, 'the instance’s folder to be removed')
  })
})

/**
 * An instance gets a /tmp of its own; a server kept in the host's /tmp (a
 * checkout there, as CI clones into one) must still start: its folders are
 * bound back read-only, and nothing else of the host's /tmp is.
 */
describe.skipIf(!hasBwrap)('a sandboxed instance of a server kept in the host’s /tmp', () => {
  it('starts, runs from its folder read-only, and sees nothing else of the host’s /tmp', async () => {
    const checkout = mkdtempSync('/tmp/myc-checkout-')
    chmodSync(checkout, 0o755) // as a clone's folder is (mkdtemp makes it 0700)
    for (const file of ['per-person', '_base', '_sdk'])
      copyFileSync(fixtureServer(file), path.join(checkout, `${file}.mjs`))
    symlinkSync(path.join(repoRoot, 'node_modules'), path.join(checkout, 'node_modules'))
    const { runtime, folder } = await scopedRuntime(
      {
        gh: fixtureEntry('per-person', {
          args: [path.join(checkout, 'per-person.mjs')],
          env: { GITHUB_TOKEN: { secret: 'github' } },
          scope: 'principal',
          sandbox: true,
        }),
      },
      { kept: { local: { github: 'operator' }, alice: { github: 'a' } } },
    )
    const { url, server } = await peopleFace(runtime)
    const alice = (await personClient(url, 'alice')).client
    try {
      expect((await whoami(alice)).secret).toBe('a')
      const call = async (name: string, file: string) =>
        JSON.parse(firstText(await alice.callTool({ name, arguments: { path: file } }))) as { ok: boolean }
      expect((await call('gh__read', path.join(checkout, 'per-person.mjs'))).ok).toBe(true)
      expect((await call('gh__write', path.join(checkout, 'planted'))).ok).toBe(false)
      // The test's own folder (myc's state and secret store) lies in the host's /tmp too: not there for it.
      expect((await call('gh__read', path.join(folder, 'config', 'mycelium', 'secrets.json'))).ok).toBe(false)
    } finally {
      await alice.close().catch(() => {})
      server.close()
      await runtime.close()
    }
  }, 30_000)
})
