import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto'
import { chmod, mkdir, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import type { KeyVault } from './keychain.js'

/**
 * Values kept out of the project, sealed: one file in the user's config
 * folder (0600), each entry encrypted with AES-256-GCM under a key kept apart
 * (MYC_TOKEN_KEY, the OS keychain, or a 0600 key file beside it). An entry is
 * found by a keyed digest of its principal and name and sealed with a key
 * derived for that principal and the store's purpose, so the file names
 * nothing and holds no value, one principal's entry never opens as
 * another's, and one store's entry never opens in another store. The OAuth
 * logins (token-store.ts) and the secrets of added servers (secret-store.ts)
 * are two such stores sharing one key.
 */

/**
 * Sealed entries kept outside this machine's file, shared by the replicas
 * of `myc serve --http` (the Redis session store): the same sealing, so the
 * store holds no value either; the key comes from MYC_TOKEN_KEY.
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

const LOCK_STALE_MS = 30_000

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

/** Keys being loaded or loaded, by folder and source (SealedStore.masterKey). */
const masterKeys = new Map<string, Promise<{ key: Buffer; source: string }>>()

export interface SealedStoreOptions {
  /** The folder of the file and of the key file. */
  dir: string
  /** Whose entries (an entry of one principal never opens as another's). */
  principal: string
  /** The file of the entries and the file of the key every sealed store of `dir` shares (config/state-roots.ts: sealedStoreFiles). */
  files: { entries: string; key: string }
  /** What the entries are for: the key each is sealed with is derived for it. */
  purpose: string
  /** What the file is, in words for its errors (`a myc token store`). */
  what: string
  /** MYC_TOKEN_KEY, when set. */
  envKey?: string | undefined
  /** The OS keychain to keep the key in (keychain.ts); absent, the key file. */
  vault?: KeyVault | undefined
  /** Entries shared by replicas instead of the file (their key must be MYC_TOKEN_KEY). */
  shared?: SharedEntries | undefined
}

/** A store of sealed values of type `T`, by name (see the top of this file). */
export class SealedStore<T> {
  readonly file: string
  readonly keyFile: string
  readonly dir: string
  readonly principal: string
  private readonly options: SealedStoreOptions
  private master: Promise<Buffer> | undefined
  private cache: { seen: string; file: StoreFile; opened: Map<string, T | undefined> } | undefined

  /** Where this store's key lives, in words (for `myc auth status`); undefined until the key was needed. */
  keySource: string | undefined

  constructor(options: SealedStoreOptions) {
    if (options.principal.length === 0) throw new Error('a sealed store needs a principal name')
    if (options.shared && options.envKey === undefined)
      throw new Error('entries shared by replicas need MYC_TOKEN_KEY, the same on every replica')
    this.options = options
    this.dir = options.dir
    this.principal = options.principal
    this.file = options.shared ? options.shared.where : options.files.entries
    this.keyFile = options.files.key
  }

  /**
   * The entry `name`, or undefined. Cheap to call often: the file is parsed
   * and an entry opened again only when it changed.
   */
  async get(name: string): Promise<T | undefined> {
    const { shared } = this.options
    const seen = shared
      ? await shared.version()
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
    // Nothing stored at all: the key (file) is neither read nor made.
    if (Object.keys(file.entries).length === 0) return undefined
    if (!opened.has(name)) opened.set(name, await this.open(file, name))
    const value = opened.get(name)
    return value === undefined ? undefined : structuredClone(value)
  }

  async put(name: string, value: T): Promise<void> {
    await this.update(name, () => value)
  }

  /** Deletes the entry; false when there was none. */
  async delete(name: string): Promise<boolean> {
    let had = false
    await this.update(name, (current) => {
      had = current !== undefined
      return null
    })
    return had
  }

  /**
   * Reads, changes and writes one entry under the store's lock (other
   * processes included): `change` returns the new value, `null` to delete it,
   * or `undefined` to leave the file alone. Resolves to the entry as it is after.
   */
  async update(
    name: string,
    change: (current: T | undefined) => T | null | undefined | Promise<T | null | undefined>,
  ): Promise<T | undefined> {
    const { shared } = this.options
    if (shared) {
      return shared.locked(async () => {
        const current = await this.open({ version: 1, entries: await shared.read() }, name)
        const next = await change(current)
        if (next === undefined) return current
        await shared.write(await this.entryId(name), next === null ? null : await this.seal(name, next))
        return next ?? undefined
      })
    }
    return this.locked(async () => {
      const file = await this.readFile()
      const current = await this.open(file, name)
      const next = await change(current)
      if (next === undefined) return current
      const id = await this.entryId(name)
      if (next === null) delete file.entries[id]
      else file.entries[id] = await this.seal(name, next)
      await this.writeFile(file)
      return next ?? undefined
    })
  }

  private async open(file: StoreFile, name: string): Promise<T | undefined> {
    const sealed = file.entries[await this.entryId(name)]
    if (!sealed) return undefined
    try {
      const decipher = createDecipheriv('aes-256-gcm', await this.entryKey(), Buffer.from(sealed.iv, 'base64'))
      decipher.setAAD(this.aad(name))
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'))
      const text = Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString(
        'utf8',
      )
      return JSON.parse(text) as T
    } catch {
      // Sealed under another key (MYC_TOKEN_KEY changed, the key file replaced) or tampered with: no entry.
      return undefined
    }
  }

  private async seal(name: string, value: T): Promise<SealedEntry> {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', await this.entryKey(), iv)
    cipher.setAAD(this.aad(name))
    const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()])
    return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') }
  }

  private aad(name: string): Buffer {
    return Buffer.from(`${this.principal}\0${name}`, 'utf8')
  }

  private async entryId(name: string): Promise<string> {
    return createHmac('sha256', await this.masterKey())
      .update(`entry\0${this.principal}\0${name}`)
      .digest('hex')
  }

  private async entryKey(): Promise<Buffer> {
    return Buffer.from(
      hkdfSync('sha256', await this.masterKey(), this.options.purpose, `principal\0${this.principal}`, 32),
    )
  }

  private masterKey(): Promise<Buffer> {
    // One load per folder and key source in a process: every store and principal shares the key, and a keychain is asked once.
    const { envKey, vault } = this.options
    const id = `${this.dir}\0${envKey ?? ''}\0${vault?.name ?? ''}`
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
    const { envKey, vault } = this.options
    if (envKey !== undefined) return { key: parseTokenKey(envKey), source: 'MYC_TOKEN_KEY' }
    const existing = await readFile(this.keyFile, 'utf8').catch(() => undefined)
    if (existing === undefined && vault) {
      const kept = await vault.read()
      if (kept !== undefined) return { key: parseTokenKey(kept), source: vault.name }
      const made = randomBytes(32).toString('base64')
      const stored = await vault.write(made).then(
        () => vault.read(),
        () => undefined,
      )
      if (stored === made) return { key: Buffer.from(made, 'base64'), source: vault.name }
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
        `${this.keyFile} does not hold a 32-byte key: delete it and the files sealed with it in ${this.dir}, then log in and add secrets again`,
      )
    return { key, source: this.keyFile }
  }

  private async ensureDir(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
  }

  private async readFile(): Promise<StoreFile> {
    const { shared } = this.options
    if (shared) return { version: 1, entries: await shared.read() }
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, entries: {} }
      throw error
    }
    const parsed = JSON.parse(text) as Partial<StoreFile>
    if (parsed.version !== 1 || typeof parsed.entries !== 'object' || parsed.entries === null)
      throw new Error(`${this.file} is not ${this.options.what} (version 1)`)
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
  private async locked<R>(fn: () => Promise<R>): Promise<R> {
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
        // A lock that vanished between the two calls is simply tried again.
        if (age > LOCK_STALE_MS) await unlink(lock).catch(() => {})
        else if (Date.now() > deadline)
          throw new Error(`${lock} is held by another myc: wait for it, or delete it if no myc is running`)
        else await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30))
      }
    }
    try {
      return await fn()
    } finally {
      // Already gone (taken over as stale by another process): nothing to release.
      await unlink(lock).catch(() => {})
    }
  }
}
