import { childSessions } from '../../src/eras/child-sessions.js'
import { mkdtempSync } from 'node:fs'
import type { Server } from 'node:http'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Client } from '@modelcontextprotocol/client'
import { HttpFace, type HttpFaceOptions } from '../../src/http/http-face.js'
import { readTokens } from '../../src/http/bearer-tokens.js'
import { createLogger } from '../../src/logger.js'
import { SecretStore } from '../../src/oauth/secret-store.js'
import { hostForThisProcess } from '../../src/runtime/host.js'
import { Runtime } from '../../src/runtime/runtime.js'
import type { Tracing } from '../../src/telemetry/tracing.js'
import { connectHttp, faceOptions, serveFace } from './http.js'
import { connectClient, fixtureEntry, loadedConfig } from './runtime.js'

/** The people of the scoped-server tests: their myc tokens (each an http.tokens entry with a `name`). */
export const PEOPLE = {
  alice: 'alice-scoped-0123456789abcdef0123456789ab',
  bob: 'bob-scoped-0123456789abcdef0123456789abcd',
  carol: 'carol-scoped-0123456789abcdef0123456789a',
} as const
export type Person = keyof typeof PEOPLE

/** The key the tests' secret stores are sealed with (never the machine's own keychain or key file). */
export const TEST_TOKEN_KEY = Buffer.alloc(32, 9).toString('base64')

/** A per-person fixture entry (tests/fixtures/servers/per-person.mjs) with `extra` keys (scope, idleMs…). */
export function perPersonEntry(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return fixtureEntry('per-person', { env: { GITHUB_TOKEN: { secret: 'github' } }, scope: 'principal', ...extra })
}

/**
 * A runtime over `servers` whose instances and secrets live in folders of
 * the test's own (`folder`), with the process environment `env` laid over
 * this one's (what a child must never fall back to), started.
 */
export async function scopedRuntime(
  servers: Record<string, unknown>,
  options: {
    env?: Record<string, string>
    http?: Record<string, unknown>
    /** Secrets kept before the children start, by person and name. */
    kept?: Record<string, Record<string, string>>
    tracing?: Tracing
  } = {},
): Promise<{ runtime: Runtime; folder: string; secrets: (person: string) => SecretStore }> {
  const folder = mkdtempSync(path.join(tmpdir(), 'myc-scoped-'))
  // The user config folder (the sealed secret store) is the test's, its key never the machine's.
  const config = { XDG_CONFIG_HOME: path.join(folder, 'config'), MYC_TOKEN_KEY: TEST_TOKEN_KEY }
  const host = { ...hostForThisProcess(), env: { ...process.env, ...config, ...options.env } }
  const runtime = new Runtime({
    childSessions,
    loaded: loadedConfig({ mcpServers: servers, ...(options.http ? { http: options.http } : {}) }),
    logger: createLogger({ quiet: !process.env.MYC_TEST_VERBOSE, verbose: Boolean(process.env.MYC_TEST_VERBOSE) }),
    version: '0.0.0-test',
    host,
    instancesDir: path.join(folder, 'instances'),
    ...(options.tracing ? { tracing: options.tracing } : {}),
  })
  const secrets = (person: string) =>
    SecretStore.forUser(
      { XDG_CONFIG_HOME: path.join(folder, 'config'), MYC_TOKEN_KEY: TEST_TOKEN_KEY },
      { principal: person },
    )
  runtime.secrets.share(secrets)
  for (const [person, kept] of Object.entries(options.kept ?? {}))
    for (const [name, value] of Object.entries(kept)) await secrets(person).set(name, value)
  await runtime.start()
  return { runtime, folder, secrets }
}

/** A face with alice's, bob's and carol's tokens in front of `runtime`, on a free loopback port. */
export async function peopleFace(
  runtime: Runtime,
  extra: Partial<HttpFaceOptions> = {},
): Promise<{ face: HttpFace; url: string; base: string; server: Server }> {
  const tokens = readTokens(
    Object.keys(PEOPLE).map((name) => ({ env: name.toUpperCase(), role: 'dev', name })),
    Object.fromEntries(Object.entries(PEOPLE).map(([name, token]) => [name.toUpperCase(), token])),
  )
  const face = new HttpFace(faceOptions(runtime, tokens, { maxSessions: 100, maxSessionsPerCredential: 16, ...extra }))
  const { base, server } = await serveFace(face)
  return { face, base, server, url: `${base}/mcp` }
}

/** A person's SDK client over HTTP, with their token. */
export async function personClient(url: string, person: Person, capabilities: Record<string, unknown> = {}) {
  return connectHttp(url, { token: PEOPLE[person], capabilities })
}

/** The text of a tool result's first content. */
export function firstText(result: unknown): string {
  return ((result as { content?: Array<{ text?: string }> }).content?.[0]?.text ?? '') as string
}

/** What per-person's `whoami` answers. */
export interface Whoami {
  pid: number
  home: string | null
  tmp: string | null
  secret: string | null
}

export async function whoami(client: Client, name = 'gh__whoami'): Promise<Whoami> {
  const result = await client.callTool({ name, arguments: {} })
  if (result.isError) throw new Error(`whoami failed: ${firstText(result)}`)
  return JSON.parse(firstText(result)) as Whoami
}

/** A client of `runtime` (its person `owner`, its 2025 session `sessionId`) that counts the resource updates it hears. */
export async function countingClient(
  runtime: Runtime,
  who: { owner?: string; sessionId?: string } = {},
): Promise<{ client: Client; updates: () => number }> {
  let updates = 0
  const { client } = await connectClient(runtime, {
    ...who,
    setup: (c) => c.setNotificationHandler('notifications/resources/updated', () => void updates++),
  })
  return { client, updates: () => updates }
}

/** Calls a tool that must succeed (else throws its text); its text, parsed when it is JSON. */
export async function callOk(client: Client, name: string, args: Record<string, unknown> = {}): Promise<unknown> {
  const result = await client.callTool({ name, arguments: args })
  const text = firstText(result)
  if (result.isError) throw new Error(`${name} failed: ${text}`)
  return text.startsWith('[') || text.startsWith('{') ? JSON.parse(text) : text
}

/** Whose instances run now (their people, sorted). */
export function instancePeople(runtime: Runtime): string[] {
  return runtime.supervisor
    .instances()
    .map((i) => i.principal)
    .sort()
}

/** Whether a process is still there. */
export { isAlive as alive } from './e2e.js'
