import type { ChildSupervisor } from '../children/supervisor.js'
import type { RelayOutcome } from '../protocol/request-relay.js'
import { redactUrls } from '../redact.js'

/** Where a server that is not running stands: what a call to one of its tools is told. */
type DownState = 'starting' | 'restarting' | 'failed' | 'stopped'

/** A server that is not running, as a caller is told of it. */
export interface ChildDown {
  server: string
  state: DownState
  /** Whether calling again later may work (a start or restart is under way or planned). */
  retryable: boolean
  /** The sentence the caller reads. */
  text: string
}

/** `ms` as a person reads a short wait: "about 3 s", "under a second". */
function inAbout(ms: number): string {
  return ms < 1_000 ? 'under a second' : `about ${Math.round(ms / 1_000)} s`
}

/**
 * Where server `key` stands when it is not running, and what a caller of
 * one of its tools is told: its state, why it went down, and when it is
 * started again (or that it is not). Nothing was sent to it.
 */
export function describeDown(supervisor: ChildSupervisor, key: string, now = Date.now()): ChildDown {
  const child = supervisor.children.get(key)
  const why = child?.lastError === undefined ? '' : ` (${redactUrls(child.lastError)})`
  const notSent = 'The call was not sent to it.'
  const planned = supervisor.plannedRestart(key)
  if (planned)
    return {
      server: key,
      state: 'restarting',
      retryable: true,
      text: `Server "${key}" is restarting${why}: its next start is in ${inAbout(planned.at - now)} (attempt ${planned.attempt} of ${planned.of}). ${notSent} Call the tool again after that.`,
    }
  if (child?.state === 'INITIALIZING') {
    const again = supervisor.restartUnderWay(key)
    return {
      server: key,
      state: again ? 'restarting' : 'starting',
      retryable: true,
      text: `Server "${key}" is ${again ? `starting again (attempt ${again.attempt} of ${again.of})` : 'starting'}: it has up to ${child.config.startupTimeoutMs} ms (startupTimeoutMs). ${notSent} Call the tool again in a few seconds.`,
    }
  }
  if (child?.state === 'FAILED')
    return {
      server: key,
      state: 'failed',
      retryable: false,
      text: `Server "${key}" failed${why} and is not restarted${supervisor.gaveUp(key) ? ' any more: its restarts are used up' : ''}. ${notSent} \`myc status\` shows why; it starts again when the config is reloaded or myc restarts.`,
    }
  return {
    server: key,
    state: 'stopped',
    retryable: false,
    text: `Server "${key}" is stopped. ${notSent}`,
  }
}

/** The tool error a caller gets for a server that is not running: a result it reads, never the answer of a tool that does not exist. */
export function downOutcome(down: ChildDown): RelayOutcome {
  return { ok: true, result: { content: [{ type: 'text', text: down.text }], isError: true } }
}
