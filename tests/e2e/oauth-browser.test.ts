import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundle, requireBundle, writeConfig } from '../helpers/e2e.js'
import { startOAuthServer, type OAuthTestServer } from '../helpers/oauth-server.js'
import { Terminal } from '../helpers/terminal.js'
import { requireTool } from '../helpers/tools.js'
import { waitFor } from '../helpers/wait-for.js'

const hasTmux = requireTool('tmux', spawnSync('tmux', ['-V']).status === 0)

/** Where the fake browser pretends the https authorization server is. */
const SECURE_HOST = 'login.example.test'

/**
 * `myc auth login` in a real terminal (tmux), with a fake `xdg-open` first
 * on PATH: it records the argv it was given and, as the person's browser,
 * follows the address (the https host is the local authorization server,
 * reached over plain HTTP). An https authorization address is opened and the
 * login ends with tokens stored; a `file:` one is never opened and the login
 * fails naming the server and the scheme.
 */
describe.runIf(hasTmux)('myc auth login opens only http(s) addresses (tmux, a fake xdg-open)', () => {
  const term = new Terminal('oauth-browser')
  let secure: OAuthTestServer
  let evil: OAuthTestServer
  let config: string
  let home: string
  let record: string
  let opener: string
  const screen = (session: string) => term.tmux('capture-pane', '-p', '-J', '-t', session)
  const opened = (): string[][] =>
    existsSync(record)
      ? readFileSync(record, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as string[])
      : []

  /** `myc auth login SERVER` in its own terminal; the screen once it exited (with `EXIT=<code>`). */
  const login = async (server: string) => {
    const env = [
      `XDG_CONFIG_HOME=${path.join(home, 'config')}`,
      `HOME=${home}`,
      `MYC_TOKEN_KEY=${'ab'.repeat(32)}`,
      `PATH=${opener}:$PATH`,
      `RECORD=${record}`,
      `AUTH_BASE=${secure.base}`,
    ].join(' ')
    term.open(
      server,
      `env ${env} ${process.execPath} ${bundle} auth login ${server} --config ${config}; echo EXIT=$?; sleep 60`,
    )
    await waitFor(() => screen(server).includes('EXIT='), 30_000, `myc auth login ${server} to end`)
    return screen(server)
  }

  beforeAll(async () => {
    requireBundle()
    secure = await startOAuthServer({ authorizationEndpoint: () => `https://${SECURE_HOST}/authorize` })
    evil = await startOAuthServer({ authorizationEndpoint: () => 'file:///tmp/myc-evil/evil.desktop' })
    config = writeConfig({
      mcpServers: { secure: { type: 'http', url: secure.mcpUrl }, evil: { type: 'http', url: evil.mcpUrl } },
    })
    home = mkdtempSync(path.join(tmpdir(), 'myc-browser-home-'))
    opener = mkdtempSync(path.join(tmpdir(), 'myc-fake-opener-'))
    record = path.join(opener, 'opened.jsonl')
    const browser = `#!${process.execPath}
const { appendFileSync } = require('node:fs')
const args = process.argv.slice(2)
appendFileSync(process.env.RECORD, JSON.stringify(args) + '\\n')
const url = new URL(args[0])
// The person's browser reaching the authorization server: its https host is the local test server.
if (url.host === '${SECURE_HOST}') void fetch(process.env.AUTH_BASE + url.pathname + url.search, { redirect: 'follow' })
`
    writeFileSync(path.join(opener, 'xdg-open'), browser)
    chmodSync(path.join(opener, 'xdg-open'), 0o755)
  }, 30_000)
  afterAll(async () => {
    term.close()
    await secure?.close()
    await evil?.close()
  })

  it('a file: authorization address is opened by nothing: the login fails naming the server and the scheme (exit 1)', async () => {
    const text = await login('evil')
    expect(text).toContain('EXIT=1')
    expect(text).toMatch(
      /the authorization address of "evil" is a file: address: myc opens and shows only http and https/,
    )
    expect(text).not.toContain('evil.desktop')
    expect(opened()).toEqual([])
  }, 60_000)

  it('an https authorization address is opened, as one argument, and the login completes (exit 0)', async () => {
    const text = await login('secure')
    expect(text).toContain('EXIT=0')
    expect(text).toMatch(/logged in to "secure"/)
    const calls = opened()
    expect(calls).toHaveLength(1)
    expect(calls[0]).toHaveLength(1)
    const address = new URL(calls[0]![0]!)
    expect(address.origin).toBe(`https://${SECURE_HOST}`)
    expect(address.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/)
  }, 60_000)
})
