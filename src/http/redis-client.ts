import { MycError } from '../errors.js'
import { redactUrl } from '../redact.js'

/**
 * How long one command to the shared store (Redis) may take. node-redis
 * bounds a command only until it is written: one written to a Redis that is
 * paused (`DEBUG SLEEP`, SIGSTOP, a stalled network) waits for ever, so
 * every command races this deadline, and the request that needed it gets
 * `503` with Retry-After instead of hanging.
 */
const STORE_COMMAND_MS = 2_000

/** How long /readyz trusts the last word on whether Redis answers before it asks again (a PING). */
const STORE_CHECK_MS = 1_000

/** Commands beyond this many queued on the connection are refused at once (Redis away, requests still coming). */
const QUEUE_MAX = 10_000

/**
 * The shared store did not answer in time, or could not be reached: the
 * request that needed it is not served (`503`); nothing goes on without the
 * check the store provides.
 */
export class StoreUnavailable extends MycError {
  constructor(what: string, cause: unknown) {
    super(
      'runtime',
      `http.sessionStore: Redis did not answer ${what} (${cause instanceof Error ? cause.message : String(cause)})`,
      { cause },
    )
  }
}

/** The commands myc sends Redis (the session store, the shared rate limit, the people's OAuth logins). */
interface RedisCommands {
  get(key: string): Promise<string | null>
  set(key: string, value: string, options: { expiration: { type: 'PX'; value: number } }): Promise<unknown>
  pExpire(key: string, ms: number): Promise<unknown>
  del(key: string): Promise<unknown>
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
}

/** What GuardedRedis needs of a node-redis client. */
interface RawClient extends RedisCommands {
  ping(): Promise<unknown>
  close(): Promise<unknown>
  destroy(): void
}

export interface GuardedRedisOptions {
  /** Each command's deadline (default STORE_COMMAND_MS). */
  timeoutMs?: number
  /** Told when Redis stops answering (with why) and when it answers again. */
  onChange?(up: boolean, error?: Error): void
  now?: () => number
}

/**
 * A Redis connection whose every command has a deadline (STORE_COMMAND_MS):
 * a command that fails or is late throws StoreUnavailable. It also knows
 * whether Redis answers (the last command's outcome, or a PING when /readyz
 * asks and nothing was heard for a second), and says when that changes.
 */
export class GuardedRedis implements RedisCommands {
  private up = true
  private heardAt = 0
  private checking: Promise<boolean> | undefined
  private readonly timeoutMs: number
  private readonly now: () => number

  constructor(
    private readonly client: RawClient,
    private readonly options: GuardedRedisOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? STORE_COMMAND_MS
    this.now = options.now ?? Date.now
  }

  get(key: string): Promise<string | null> {
    return this.run('GET', () => this.client.get(key))
  }

  set(key: string, value: string, options: { expiration: { type: 'PX'; value: number } }): Promise<unknown> {
    return this.run('SET', () => this.client.set(key, value, options))
  }

  pExpire(key: string, ms: number): Promise<unknown> {
    return this.run('PEXPIRE', () => this.client.pExpire(key, ms))
  }

  del(key: string): Promise<unknown> {
    return this.run('DEL', () => this.client.del(key))
  }

  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown> {
    return this.run('EVAL', () => this.client.eval(script, options))
  }

  /** Whether Redis answers now: what the last command found if it was within STORE_CHECK_MS, else a PING (one at a time). */
  ready(): Promise<boolean> {
    if (this.now() - this.heardAt < STORE_CHECK_MS) return Promise.resolve(this.up)
    this.checking ??= this.run('PING', () => this.client.ping()).then(
      () => true,
      () => false,
    )
    return this.checking.finally(() => (this.checking = undefined))
  }

  /** Closes the connection; with Redis away (commands waiting for it), drops it after a second instead of waiting. */
  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const closed = await Promise.race([
      this.client.close().then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_WAIT_MS))),
    ])
    clearTimeout(timer)
    if (!closed) this.client.destroy()
  }

  private async run<T>(what: string, send: () => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs)
    })
    try {
      // The command itself may still be answered later (Redis paused): its late reply is dropped.
      const reply = await Promise.race([send(), late])
      this.heard(true)
      return reply
    } catch (error) {
      this.heard(false, error as Error)
      throw new StoreUnavailable(what, error)
    } finally {
      clearTimeout(timer)
    }
  }

  private heard(up: boolean, error?: Error): void {
    this.heardAt = this.now()
    if (up === this.up) return
    this.up = up
    this.options.onChange?.(up, error)
  }
}

/** How long closing waits for Redis to answer what is queued. */
const CLOSE_WAIT_MS = 1_000

/**
 * Connects to Redis (node-redis, loaded only now) and pings it: an
 * unreachable Redis is a runtime error naming `http.sessionStore` (user and
 * password never shown). Once connected, a lost connection is retried, and
 * commands meanwhile fail at once instead of waiting for it.
 */
export async function connectRedis(
  url: string,
  options: GuardedRedisOptions & { onError(error: Error): void; connectTimeoutMs?: number },
) {
  const { createRedisClient: createClient } = await (await import('./http-deps.js')).loadHttpDeps()
  let connected = false
  // At start a refusal is final (myc says so and exits); once connected, a lost connection is retried.
  const client = createClient({
    url,
    disableOfflineQueue: true,
    commandsQueueMaxLength: QUEUE_MAX,
    socket: {
      connectTimeout: options.connectTimeoutMs ?? 5_000,
      reconnectStrategy: (retries: number, cause: Error) => (connected ? Math.min(100 * 2 ** retries, 2_000) : cause),
    },
  })
  client.on('error', (error: Error) => options.onError(error))
  try {
    await client.connect()
    await client.ping()
    connected = true
  } catch (error) {
    if (client.isOpen) client.destroy()
    throw new MycError(
      'runtime',
      `http.sessionStore: cannot reach Redis at ${redactUrl(url)}: ${(error as Error).message}`,
    )
  }
  return new GuardedRedis(client as unknown as RawClient, options)
}
