import type { Readable, Writable } from 'node:stream'
import { ExitCode } from '../errors.js'
import type { Logger } from '../logger.js'
import { StdioServerStream } from '../protocol/stdio-server-transport.js'
import type { Runtime } from '../runtime/runtime.js'
import { killChildrenOnExit } from '../runtime/kill-on-exit.js'
import { startServing } from '../runtime/start-progress.js'
import type { PrincipalView } from '../principal/view.js'
import { StdioEraConnection, type StdioEraMode } from './stdio-eras.js'
import type { StdioFace } from './stdio-face.js'
import type { Era } from '../protocol/facts.js'

export interface ServeStdioOptions {
  runtime: Runtime
  /** The faces of the two eras (src/eras/: ClientFaces), closed here once the connection ends. */
  faces: Readonly<Record<Era, { readonly stdio: StdioFace }>> & { close(): void }
  view: PrincipalView
  logger: Logger
  stdin?: Readable
  stdout?: Writable
  /** Signals that end the server; defaults to SIGINT and SIGTERM on this process. */
  signals?: NodeJS.EventEmitter
  /** The protocol eras served (`--era`): decided per connection from its first message by default. */
  era?: StdioEraMode
}

/**
 * Runs myc as an MCP server on stdio until the client goes away (stdin
 * ends) or a signal arrives; then stops every child and its descendants.
 * Resolves with the exit code (130 after SIGINT).
 */
export async function serveStdio(options: ServeStdioOptions): Promise<number> {
  const { runtime, logger } = options
  const signals = options.signals ?? process
  // If myc is ended abruptly, still take the children's process groups down.
  const stopKillOnExit = killChildrenOnExit(runtime)

  // The client is served at once; list requests wait (bounded) for the children's first start.
  startServing(runtime, logger, 'on stdio')

  // The client's first message decides its era, and which face serves it.
  const { faces } = options
  const connection = new StdioEraConnection({
    runtime,
    faces,
    view: options.view,
    era: options.era ?? 'auto',
    onNote: (note) => logger.debug(note),
  })
  let exitCode: number = ExitCode.ok
  let signalled = false
  let onSignal: ((signal: NodeJS.Signals) => void) | undefined
  await new Promise<void>((resolve) => {
    onSignal = (signal: NodeJS.Signals) => {
      logger.debug(`received ${signal}; shutting down`)
      exitCode = signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.ok
      signalled = true
      resolve()
    }
    signals.once('SIGINT', onSignal)
    signals.once('SIGTERM', onSignal)
    connection.onclose = () => resolve()
    const stream = new StdioServerStream(options.stdin, options.stdout, {
      maxMessageBytes: runtime.loaded.config.limits.maxMessageBytes,
      onRejected: (reason) => logger.debug(`refused a message from the client: ${reason}`),
    })
    connection.connect(stream).catch((error: unknown) => {
      logger.error(`could not start the stdio server: ${String(error)}`)
      exitCode = ExitCode.runtime
      resolve()
    })
  })
  signals.off('SIGINT', onSignal!)
  signals.off('SIGTERM', onSignal!)
  await connection.close()
  faces.close()
  await runtime.close({ urgent: signalled })
  stopKillOnExit()
  return exitCode
}
