import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { chmod, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { osKeyVault, type KeyVault } from './keychain.js'
import type {
  AuthorizationServerMetadata,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client'

/**
 * OAuth logins to HTTP children, kept out of the project: one file in the
 * user's config folder (0600), each entry encrypted with AES-256-GCM under a
 * key kept apart (a 0600 key file beside it, or MYC_TOKEN_KEY). An entry is
 * found by a keyed digest of its principal and server URL and sealed with a
 * key derived for that principal, so the file names no server and holds no
 * token text, and one principal's entry never opens as another's.
 */

/** One login: what `myc auth login` got, and what a refresh needs. */
export interface StoredLogin {
  serverUrl: string
  tokens: StoredOAuthTokens
  /** When the access token expires (ms since the epoch), from `expires_in`; absent when the server did not say. */
  expiresAt?: number
  client: StoredOAuthClientInformation
  authorizationServerUrl: string
  authorizationServerMetadata?: AuthorizationServerMetadata
  /** The RFC 8707 resource indicator the tokens were issued for. */
  resource?: string
  /** Scope a 403 `insufficient_scope` asked for since: the next login asks for it too (step-up). */
  scopeNeeded?: string
  savedAt: number
}

/**
 * Sealed entries kept outside this machine's file, shared by the replicas
 * of `myc serve --http` (the Redis session store): the same sealing, so the
 * store holds no token text either; the key comes from MYC_TOKEN_KEY.
 */
export interface SharedEntries {
  /** Where they are, in words without secrets. */
  readonly where: string
  /** Changes whenever an entry does (what a read may be cached by). */
  version(): Promise<string>
  read(): Promise<Record<string, SealedEntry>>
  /** Writes an entry, or deletes it (null). */
  write(id: string, entry: SealedEntry | null): Promise<void>
  /** Runs `fn` holding a lock the replicas share. */
  locked<T>(fn: () => Promise<T>): Promise<T>
}

export interface SealedEntry {
  iv: string
  tag: string
  data: string
}

interface StoreFile {
  version: 1
  entries: Record<string, SealedEntry>
}

/** The principal of the CLI and of `myc serve` on stdio. */
export const LOCAL_PRINCIPAL = 'local'

const TOKENS_FILE = 'oauth-tokens.json'
const KEY_FILE = 'oauth-token.key'
const LOCK_STALE_MS = 30_000

/** `$XDG_CONFIG_HOME/mycelium`, `~/.config/mycelium`, or `%APPDATA%\mycelium` on Windows. */
export function userConfigDir(
  env: Record<string, string | undefined> = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = os.homedir(),
): string {
  if (platform === 'win32') return path.join(env.APPDATA || path.join(home, 'AppData', 'Roaming'), 'mycelium')
  const xdg = env.XDG_CONFIG_HOME
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.config'), 'mycelium')
}

/** The key MYC_TOKEN_KEY names: 32 bytes, as base64 or 64 hex digits. */
export function parseTokenKey(text: string): Buffer {
  const trimmed = text.trim()
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64')
  if (key.length !== 32)
    throw new Error(
      'MYC_TOKEN_KEY must be 32 bytes written as base64 or 64 hex digits (make one with: openssl rand -base64 32)',
    )
  return key
}

/** The serverUrl an entry is kept under: the URL as the config writes it, normalised. */
function urlKey(serverUrl: string): string {
  return new URL(serverUrl).href
}

/** Keys being loaded or loaded, by folder and source (TokenStore.masterKey). */
const masterKeys = new Map<string, Promise<{ key: Buffer; source: string }>>()

export class TokenStore {
  readonly file: string
  readonly keyFile: string
  private master: Promise<Buffer> | undefined

  constructor(
    readonly dir: string,
    readonly principal: string,
    private readonly envKey: string | undefined = undefined,
    /** The OS keychain to keep the key in (keychain.ts); absent, the key file. */
    private readonly vault: KeyVault | undefined = undefined,
    /** Entries shared by replicas instead of the file (their key must be MYC_TOKEN_KEY). */
    private readonly shared: SharedEntries | undefined = undefined,
  ) {
    if (principal.length === 0) throw new Error('a token store needs a principal name')
    if (shared && envKey === undefined)
      throw new Error('logins shared by replicas need MYC_TOKEN_KEY, the same on every replica')
    this.file = shared ? shared.where : path.join(dir, TOKENS_FILE)
    this.keyFile = path.join(dir, KEY_FILE)
  }

  /** The store of `principal` in the user's config folder, its key from MYC_TOKEN_KEY, the key file, or the OS keychain. */
  static forUser(
    principal: string = LOCAL_PRINCIPAL,
    env: Record<string, string | undefined> = process.env,
  ): TokenStore {
    return new TokenStore(
      userConfigDir(env),
      principal,
      env.MYC_TOKEN_KEY || undefined,
      env.MYC_TOKEN_KEY ? undefined : osKeyVault(env),
    )
  }

  /** Where this store's key lives, in words (for `myc auth status`); undefined until the key was needed. */
  keySource: string | undefined

  /**
   * The login of `serverUrl`, or undefined. Read on every request of a child,
   * so the file is parsed and an entry opened again only when it changed.
   */
  async get(serverUrl: string): Promise<StoredLogin | undefined> {
    const seen = this.shared
      ? await this.shared.version()
      : await stat(this.file).then(
          (s) => `${s.mtimeMs}:${s.size}:${s.ino}`,
          () => 'absent',
        )
    if (this.cache?.seen !== seen)
      this.cache = {
        seen,
        file: seen === 'absent' ? { version: 1, entries: {} } : await this.readFile(),
        opened: new Map(),
      }
    const { file, opened } = this.cache
    // No login at all: the key (file) is neither read nor made.
    if (Object.keys(file.entries).length === 0) return undefined
    if (!opened.has(serverUrl)) opened.set(serverUrl, await this.open(file, serverUrl))
    const login = opened.get(serverUrl)
    return login === undefined ? undefined : structuredClone(login)
  }

  private cache: { seen: string; file: StoreFile; opened: Map<string, StoredLogin | undefined> } | undefined

  async put(serverUrl: string, login: StoredLogin): Promise<void> {
    await this.update(serverUrl, () => login)
  }

  /** Deletes the login; false when there was none. */
  async delete(serverUrl: string): Promise<boolean> {
    let had = false
    await this.update(serverUrl, (current) => {
      had = current !== undefined
      return null
    })
    return had
  }

  /**
   * Reads, changes and writes one entry under the store's lock (other
   * processes included): `change` returns the new login, `null` to delete it,
   * or `undefined` to leave the file alone. Resolves to the entry as it is after.
   */
  async update(
    serverUrl: string,
    change: (
      current: StoredLogin | undefined,
    ) => StoredLogin | null | undefined | Promise<StoredLogin | null | undefined>,
  ): Promise<StoredLogin | undefined> {
    const { shared } = this
    if (shared) {
      return shared.locked(async () => {
        const current = await this.open({ version: 1, entries: await shared.read() }, serverUrl)
        const next = await change(current)
        if (next === undefined) return current
        await shared.write(await this.entryId(serverUrl), next === null ? null : await this.seal(serverUrl, next))
        return next ?? undefined
      })
    }
    return this.locked(async () => {
      const file = await this.readFile()
      const current = await this.open(file, serverUrl)
      const next = await change(current)
      if (next === undefined) return current
      const id = await this.entryId(serverUrl)
      if (next === null) delete file.entries[id]
      else file.entries[id] = await this.seal(serverUrl, next)
      await this.writeFile(file)
      return next ?? undefined
    })
  }

  private async open(file: StoreFile, serverUrl: string): Promise<StoredLogin | undefined> {
    const sealed = file.entries[await this.entryId(serverUrl)]
    if (!sealed) return undefined
    try {
      const decipher = createDecipheriv('aes-256-gcm', await this.entryKey(), Buffer.from(sealed.iv, 'base64'))
      decipher.setAAD(this.aad(serverUrl))
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'))
      const text = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString(
        'utf8',
      )
      return JSON.parse(text) as StoredLogin
    } catch {
      // Sealed under another key (MYC_TOKEN_KEY changed, the key file replaced) or tampered with: no login.
      return undefined
    }
  }

  private async seal(serverUrl: string, login: StoredLogin): Promise<SealedEntry> {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', await this.entryKey(), iv)
    cipher.setAAD(this.aad(serverUrl))
    const data = Buffer.concat([cipher.update(JSON.stringify(login), 'utf8'), cipher.final()])
    return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') }
  }

  private aad(serverUrl: string): Buffer {
    return Buffer.from(`${this.principal}\0${urlKey(serverUrl)}`, 'utf8')
  }

  private async entryId(serverUrl: string): Promise<string> {
    return createHmac('sha256', await this.masterKey())
      .update(`entry\0${this.principal}\0${urlKey(serverUrl)}`)
      .digest('hex')
  }

  private async entryKey(): Promise<Buffer> {
    return Buffer.from(
      hkdfSync('sha256', await this.masterKey(), 'mycelium-oauth-tokens', `principal\0${this.principal}`, 32),
    )
  }

  private masterKey(): Promise<Buffer> {
    // One load per folder and key source in a process: every principal's store shares the key, and a keychain is asked once.
    const id = `${this.dir}\0${this.envKey ?? ''}\0${this.vault?.name ?? ''}`
    let loading = masterKeys.get(id)
    if (!loading) {
      loading = this.loadKey()
      masterKeys.set(id, loading)
      loading.catch(() => masterKeys.delete(id))
    }
    this.master ??= loading.then(({ key, source }) => ((this.keySource = source), key))
    return this.master
  }

  /**
   * The key: MYC_TOKEN_KEY; else a key file already there (its entries are
   * sealed with it); else the OS keychain's, made there when it has none;
   * else a new key file. A keychain that fails leaves the file.
   */
  private async loadKey(): Promise<{ key: Buffer; source: string }> {
    if (this.envKey !== undefined) return { key: parseTokenKey(this.envKey), source: 'MYC_TOKEN_KEY' }
    const existing = await readFile(this.keyFile, 'utf8').catch(() => undefined)
    if (existing === undefined && this.vault) {
      const kept = await this.vault.read()
      if (kept !== undefined) return { key: parseTokenKey(kept), source: this.vault.name }
      const made = randomBytes(32).toString('base64')
      const stored = await this.vault.write(made).then(
        () => this.vault!.read(),
        () => undefined,
      )
      if (stored === made) return { key: Buffer.from(made, 'base64'), source: this.vault.name }
    }
    await this.ensureDir()
    try {
      await writeFile(this.keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const key = Buffer.from((await readFile(this.keyFile, 'utf8')).trim(), 'base64')
    if (key.length !== 32)
      throw new Error(
        `${this.keyFile} does not hold a 32-byte key: delete it and the logins in ${this.file}, then log in again`,
      )
    return { key, source: this.keyFile }
  }

  private async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
  }

  private async readFile(): Promise<StoreFile> {
    if (this.shared) return { version: 1, entries: await this.shared.read() }
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, entries: {} }
      throw error
    }
    const parsed = JSON.parse(text) as Partial<StoreFile>
    if (parsed.version !== 1 || typeof parsed.entries !== 'object' || parsed.entries === null)
      throw new Error(`${this.file} is not a myc token store (version 1)`)
    return { version: 1, entries: parsed.entries }
  }

  private async writeFile(file: StoreFile): Promise<void> {
    await this.ensureDir()
    const tmp = `${this.file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
    await writeFile(tmp, `${JSON.stringify(file, null, 1)}\n`, { mode: 0o600 })
    await chmod(tmp, 0o600)
    await rename(tmp, this.file)
  }

  /** Runs `fn` holding `<file>.lock` (created exclusively; a lock older than 30 s is taken over). */
  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    await this.ensureDir()
    const lock = `${this.file}.lock`
    const deadline = Date.now() + 2 * LOCK_STALE_MS
    for (;;) {
      try {
        const handle = await open(lock, 'wx', 0o600)
        await handle.writeFile(`${process.pid}\n`)
        await handle.close()
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        const age = await stat(lock).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        )
        if (age > LOCK_STALE_MS) await unlink(lock).catch(() => {})
        else if (Date.now() > deadline)
          throw new Error(`${lock} is held by another myc: wait for it, or delete it if no myc is running`)
        else await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30))
      }
    }
    try {
      return await fn()
    } finally {
      await unlink(lock).catch(() => {})
    }
  }
}
