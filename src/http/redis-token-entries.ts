import { randomBytes } from 'node:crypto'
import type { SealedEntry, SharedEntries } from '../oauth/token-store.js'

/** What the entries need of a Redis connection (the session store's). */
export interface RedisScripts {
  get(key: string): Promise<string | null>
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>
}

/** The people's OAuth logins' hash (its version counter and lock beside it, `:version` and `:lock`). */
const TOKEN_ENTRIES = 'myc:oauth:tokens'
/** The people's own secrets' (oauth/secret-store.ts). */
export const SECRET_ENTRIES = 'myc:secrets'
/** A lock older than this was left by a replica that died holding it. */
const LOCK_MS = 30_000

const WRITE = `if ARGV[2] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return redis.call('INCR', KEYS[2])`
const TAKE = `return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

/**
 * Sealed entries in the Redis session store, shared by every replica (the
 * people's OAuth logins, their secrets): one hash of sealed entries (the
 * stores seal them with MYC_TOKEN_KEY, so Redis holds no token or secret
 * text), a version counter that moves with each write, and a lock taken
 * with SET NX PX.
 */
export class RedisTokenEntries implements SharedEntries {
  private readonly entries: string
  private readonly versionKey: string
  private readonly lock: string

  constructor(
    private readonly client: RedisScripts,
    readonly where: string,
    hash: string = TOKEN_ENTRIES,
  ) {
    this.entries = hash
    this.versionKey = `${hash}:version`
    this.lock = `${hash}:lock`
  }

  async version(): Promise<string> {
    return (await this.client.get(this.versionKey)) ?? '0'
  }

  async read(): Promise<Record<string, SealedEntry>> {
    const flat = (await this.client.eval(`return redis.call('HGETALL', KEYS[1])`, {
      keys: [this.entries],
      arguments: [],
    })) as string[]
    const entries: Record<string, SealedEntry> = {}
    for (let i = 0; i + 1 < flat.length; i += 2) {
      try {
        entries[flat[i]!] = JSON.parse(flat[i + 1]!) as SealedEntry
      } catch {
        // Not one of ours: no login.
      }
    }
    return entries
  }

  async write(id: string, entry: SealedEntry | null): Promise<void> {
    await this.client.eval(WRITE, {
      keys: [this.entries, this.versionKey],
      arguments: [id, entry === null ? '' : JSON.stringify(entry)],
    })
  }

  async locked<T>(fn: () => Promise<T>): Promise<T> {
    const token = randomBytes(12).toString('hex')
    const deadline = Date.now() + 2 * LOCK_MS
    while ((await this.client.eval(TAKE, { keys: [this.lock], arguments: [token, String(LOCK_MS)] })) === null) {
      if (Date.now() > deadline) throw new Error(`${this.where} are locked by another replica: try again`)
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30))
    }
    try {
      return await fn()
    } finally {
      await this.client.eval(RELEASE, { keys: [this.lock], arguments: [token] }).catch(() => {})
    }
  }
}
