import type { Runtime } from '../runtime/runtime.js'
import { HttpRpcCode, refusal } from './responses.js'

/** Where the operator lists the instances of scoped servers (the metrics credential). */
export const INSTANCES_PATH = '/instances'

/**
 * `GET /instances` (the metrics credential, or the metrics address): each
 * instance of a scoped server (docs/team.md) with its person, session (its
 * first characters), host pid, state, requests in flight, start and last
 * use; to anyone else, 401 with `challenge`.
 */
export function instancesAnswer(runtime: Runtime, allowed: boolean, challenge: string): Response {
  if (!allowed)
    return refusal(
      401,
      HttpRpcCode.server,
      'Unauthorized: /instances needs Authorization: Bearer <http.metricsToken>',
      {
        'WWW-Authenticate': challenge,
      },
    )
  const instances = runtime.supervisor
    .instances()
    .map(({ session, ...i }) => ({ ...i, ...(session !== undefined ? { session: session.slice(0, 8) } : {}) }))
  return Response.json({ instances }, { headers: { 'Cache-Control': 'no-store' } })
}
