import { SECRET_NAME } from '../config/expand-env.js'
import type { Logger } from '../logger.js'
import { SECRETS_PATH } from '../runtime/person-secrets.js'
import type { Runtime } from '../runtime/runtime.js'
import type { HttpPrincipal } from './principals.js'
import { RateLimiter } from './rate-limit.js'
import { plainText as text } from './responses.js'
import { secretValue } from '../oauth/secret-store.js'
import type { InboundRequest } from './node-bridge.js'

/** The largest secret a person may set over HTTP (bytes of UTF-8). */
export const MAX_SECRET_BYTES = 64 * 1024
/** Secrets one credential may set a minute over HTTP, whatever `http.rateLimit` says. */
export const SECRET_SETS_PER_MINUTE = 10

export interface SecretsRouteOptions {
  runtime: Runtime
  logger: Logger
}

/**
 * `PUT /secrets/<name>` (`http.selfServiceSecrets`): a person keeps their own
 * secret, what `{ "secret": "<name>" }` in a scoped server's `env` reads
 * for them (docs/team.md), with their own myc credential; the body is the
 * value (one trailing newline dropped). It is stored under the
 * credential's name (an http.tokens `name`, or `jwt:<sub>`), sealed, and
 * never answered back: no method reads a secret. Each request counts against
 * `http.rateLimit` like any (`admit`), and besides at most
 * SECRET_SETS_PER_MINUTE a credential. The person's idle instances stop, so
 * their next call starts one with the new value.
 */
export class SecretsRoute {
  private readonly limiter = new RateLimiter({ requestsPerMinute: SECRET_SETS_PER_MINUTE })

  constructor(private readonly options: SecretsRouteOptions) {}

  static handles(pathname: string): boolean {
    return pathname.startsWith(`${SECRETS_PATH}/`)
  }

  async handle(inbound: InboundRequest, url: URL, admit: () => Promise<HttpPrincipal | Response>): Promise<Response> {
    if (inbound.request.method !== 'PUT')
      return text(405, 'Method Not Allowed: PUT sets a secret; none is ever read back', { Allow: 'PUT' })
    const principal = await admit()
    if (principal instanceof Response) return principal
    const name = nameOf(url)
    if (name === undefined)
      return text(
        400,
        'Bad Request: a secret\'s name is letters, digits, ".", "_" and "-", starting with a letter or digit',
      )
    if (principal.owner === undefined)
      return text(
        403,
        'Forbidden: this credential has no name to keep secrets under; give its http.tokens entry a "name" (without http.tokens, set yours with: myc secrets set NAME)',
      )
    const limited = await this.limiter.take(principal.key)
    if (!limited.ok)
      return text(
        429,
        `Too Many Requests: at most ${SECRET_SETS_PER_MINUTE} secrets a minute; retry in ${limited.retryAfterSeconds} s`,
        { 'Retry-After': String(limited.retryAfterSeconds) },
      )
    const value = await valueOf(inbound)
    if (typeof value !== 'string') return value
    await this.options.runtime.secrets.store(principal.owner).set(name, value)
    await this.options.runtime.supervisor.personChanged(principal.owner)
    this.options.logger.debug(`http: ${principal.label} set their secret "${name}"`)
    return Response.json({ kept: true, name, principal: principal.owner }, { headers: { 'Cache-Control': 'no-store' } })
  }
}

function nameOf(url: URL): string | undefined {
  let name: string
  try {
    name = decodeURIComponent(url.pathname.slice(SECRETS_PATH.length + 1))
  } catch {
    return undefined
  }
  return SECRET_NAME.test(name) ? name : undefined
}

/** The body as the secret's value (one trailing newline dropped), or the refusal: too large, empty. */
async function valueOf(inbound: InboundRequest): Promise<string | Response> {
  const body = await inbound.readBody(MAX_SECRET_BYTES)
  if (body.tooLarge) return text(413, `Payload Too Large: a secret may be at most ${MAX_SECRET_BYTES} bytes`)
  const value = secretValue(body.text)
  if (value === '') return text(400, "Bad Request: the body is the secret's value, and it is empty")
  return value
}
