import { execFileSync } from 'node:child_process'
import { mkdtempSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { connectToMyc } from '../helpers/e2e.js'
import { repoRoot } from '../helpers/fixtures.js'

/**
 * What a newcomer runs first: `myc serve --config mycelium.config.json` in a
 * fresh clone. The clone is a real `git clone` of this checkout (committed
 * files only), with node_modules linked in as `npm ci` would have put them.
 */
describe('the repo’s own mycelium.config.json (a fresh clone)', () => {
  const clone = path.join(mkdtempSync(path.join(tmpdir(), 'myc-clone-')), 'repo')
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', repoRoot, clone])
  // The working tree's config and skills, so the test checks what is being committed.
  execFileSync('cp', [path.join(repoRoot, 'mycelium.config.json'), clone])
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(clone, 'node_modules'))
  const memoryFile = path.join(path.dirname(clone), 'memory.jsonl')
  let close: (() => Promise<void>) | undefined

  afterAll(async () => {
    await close?.()
  })

  it('serves as it stands: the example servers’ tools for the default role, and the meta tools', async () => {
    const { client } = await connectToMyc(['serve', '--config', path.join(clone, 'mycelium.config.json')], {
      env: { MYC_MEMORY_FILE: memoryFile },
      cwd: clone,
    })
    close = () => client.close()
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names.some((n) => n.startsWith('fs__'))).toBe(true)
    expect(names.some((n) => n.startsWith('memory__'))).toBe(true)
    expect(names).toContain('mycelium__activate_skill')
    // Policy applies: the reader skill reads, nothing writes until a skill that may is activated.
    expect(names).toContain('fs__read_text_file')
    expect(names).not.toContain('fs__write_file')
    const listing = await client.callTool({ name: 'fs__list_directory', arguments: { path: clone } })
    expect(JSON.stringify(listing.content)).toContain('mycelium.config.json')
  }, 60_000)
})
