import type { ChildConnection } from '../children/child.js'
import { logAbove, type Logger } from '../logger.js'
import { redactUrls } from '../redact.js'
import { countOf } from '../words.js'
import { LiveLines, liveLinesWanted, type LineStream, type LiveLine } from '../terminal-lines.js'
import type { Runtime } from './runtime.js'

export interface StartProgressOptions {
  /** Where the lines go (stderr). */
  stream: LineStream
  env: Readonly<Record<string, string | undefined>>
  /** The command prints JSON: no lines. */
  json?: boolean
  /** The command's logger: its lines are written above the progress lines while they show. */
  logger: Logger
  /** The children waited for (default: the eager ones). */
  keys?: readonly string[]
}

/**
 * One line per child on a terminal while children start (`⠋ name  starting
 * (4 s)`, then `✓ name  ready: 12 tools` or `✗ name  could not start: …`),
 * updated in place; the lines go away once every child waited for is up or
 * failed. Nothing is drawn when the stream is not a terminal, or with
 * `--json`. Returns the function that takes the lines away early (the
 * command ended first); calling it again does nothing.
 */
export function showStartProgress(runtime: Runtime, options: StartProgressOptions): () => void {
  const keys = (
    options.keys ??
    [...runtime.supervisor.children.values()].filter((c) => c.config.startup !== 'lazy').map((c) => c.key)
  ).filter((key) => runtime.supervisor.children.has(key))
  if (keys.length === 0 || !liveLinesWanted(options.stream, options.env, options)) return () => {}
  const lines = new LiveLines(options.stream)
  const width = Math.max(...keys.map((k) => k.length))
  const since = new Map<string, number>()
  const settled = new Set<string>()
  let stopLogging: () => void = () => {}
  let unsubscribe: () => void = () => {}
  const stop = () => {
    unsubscribe()
    stopLogging()
    lines.close()
  }
  const show = (child: ChildConnection) => {
    if (!keys.includes(child.key)) return
    if (child.state === 'INITIALIZING' && !since.has(child.key)) since.set(child.key, Date.now())
    const line = lineOf(child, width, since.get(child.key))
    lines.set(child.key, line)
    if (line.mark !== undefined) settled.add(child.key)
    else settled.delete(child.key)
    if (settled.size === keys.length) stop()
  }
  stopLogging = logAbove(options.logger, (write) => lines.above(write))
  unsubscribe = runtime.onChildState((child) => show(child))
  for (const key of keys) show(runtime.supervisor.children.get(key)!)
  return stop
}

/** A child's line: under way while it starts (or waits to), marked once it is up or failed. */
function lineOf(child: ChildConnection, width: number, since: number | undefined): LiveLine {
  const name = child.key.padEnd(width)
  if (child.state === 'RUNNING') {
    const tools = child.lists.tools.length
    return { mark: '✓', text: `${name}  ready: ${countOf(tools, 'tool')}` }
  }
  // A start error can quote the child's URL: without its secrets.
  if (child.state === 'FAILED')
    return { mark: '✗', text: `${name}  could not start: ${redactUrls(child.lastError ?? 'unknown error')}` }
  return { text: `${name}  starting`, ...(since !== undefined ? { since } : {}) }
}

/** Starts the eager children (`runtime.start()`), with their lines on a terminal meanwhile ({@link showStartProgress}). */
export async function startWithProgress(runtime: Runtime, options: StartProgressOptions): Promise<void> {
  const stop = showStartProgress(runtime, options)
  try {
    await runtime.start()
  } finally {
    stop()
  }
}

/**
 * Starts the children of a runtime that serves clients, and says so: the
 * tools and running servers once they have started (`where`: "on stdio",
 * "over HTTP"), or at once that no server is configured.
 */
export function startServing(runtime: Runtime, logger: Logger, where: string): void {
  void runtime.start().then(() => {
    const running = [...runtime.supervisor.children.values()].filter((c) => c.state === 'RUNNING').length
    logger.info(
      `serving ${runtime.catalogue.tools().length} tools from ${running} of ${runtime.supervisor.children.size} servers ${where}`,
    )
  })
  if (runtime.supervisor.children.size === 0)
    logger.info('no servers configured: add them under "mcpServers" in mycelium.config.json (or run `myc init`)')
}
