import { describe, expect, it } from 'vitest'
import { diffConfig, isEmptyDiff, sameValue } from '../../src/config/diff.js'
import { parseConfig } from '../../src/config/load.js'

const parse = (raw: Record<string, unknown>) =>
  parseConfig(raw, { file: '/cfg/mycelium.config.json', env: { TOKEN: 't' } }).config
const servers = (entries: Record<string, unknown>) => ({ mcpServers: entries })

describe('diffConfig', () => {
  const a = { command: 'node', args: ['a.js'] }
  const b = { command: 'node', args: ['b.js'] }

  it('finds servers added, removed and changed, in the new order', () => {
    const d = diffConfig(parse(servers({ a, b })), parse(servers({ b: { ...b, env: { X: '1' } }, c: a, d: b })))
    expect(d.servers).toEqual({ added: ['c', 'd'], removed: ['a'], changed: ['b'] })
    expect(d.policy).toBe(false)
    expect(d.needsRestart).toEqual([])
  })

  it('treats disabling as removing and enabling as adding', () => {
    expect(diffConfig(parse(servers({ a, b })), parse(servers({ a: { ...a, disabled: true }, b }))).servers).toEqual({
      added: [],
      removed: ['a'],
      changed: [],
    })
    expect(diffConfig(parse(servers({ a: { ...a, disabled: true } })), parse(servers({ a }))).servers).toEqual({
      added: ['a'],
      removed: [],
      changed: [],
    })
  })

  it('sees every field of an entry, defaults and expanded env included', () => {
    expect(diffConfig(parse(servers({ a })), parse(servers({ a: { ...a, timeoutMs: 5 } }))).servers.changed).toEqual([
      'a',
    ])
    expect(
      diffConfig(parse(servers({ a })), parse(servers({ a: { ...a, args: ['a.js', '--x'] } }))).servers.changed,
    ).toEqual(['a'])
    expect(
      diffConfig(parse(servers({ a })), parse(servers({ a: { ...a, env: { T: '${TOKEN}' } } }))).servers.changed,
    ).toEqual(['a'])
    // Writing a default out changes nothing.
    expect(isEmptyDiff(diffConfig(parse(servers({ a })), parse(servers({ a: { ...a, startup: 'eager' } }))))).toBe(true)
    // Nor does key order.
    expect(
      isEmptyDiff(
        diffConfig(
          parse(servers({ a: { command: 'node', args: ['a.js'] } })),
          parse(servers({ a: { args: ['a.js'], command: 'node' } })),
        ),
      ),
    ).toBe(true)
  })

  it('notices a new server order (it decides which clashing name wins)', () => {
    const d = diffConfig(parse(servers({ a, b })), parse(servers({ b, a })))
    expect(d.order).toBe(true)
    expect(d.servers).toEqual({ added: [], removed: [], changed: [] })
  })

  it('rebuilds the policy for skills and roles, and names what needs a restart', () => {
    const before = parse({ ...servers({ a }), roles: { default: 'dev' } })
    expect(
      diffConfig(
        before,
        parse({ ...servers({ a }), roles: { default: 'dev', definitions: { dev: { deny: ['a:x'] } } } }),
      ).policy,
    ).toBe(true)
    expect(
      diffConfig(before, parse({ ...servers({ a }), roles: { default: 'dev' }, skills: { dirs: ['other'] } })).policy,
    ).toBe(true)
    const d = diffConfig(
      before,
      parse({
        ...servers({ a }),
        roles: { default: 'dev' },
        namespace: { separator: '.' },
        sandbox: { trust: 'restricted' },
        session: { escalation: 'manual' },
        limits: { maxMessageBytes: 2048 },
      }),
    )
    expect(d.policy).toBe(false)
    expect(d.needsRestart).toEqual(['limits', 'namespace', 'sandbox', 'session'])
  })

  it('compares values deeply, whatever the key order', () => {
    expect(sameValue({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true)
    expect(sameValue({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true)
    expect(sameValue({ a: [1, 2] }, { a: [2, 1] })).toBe(false)
    expect(sameValue({ a: 1 }, { a: 1, b: undefined })).toBe(false)
    expect(sameValue([], {})).toBe(false)
    expect(sameValue(null, {})).toBe(false)
  })
})
