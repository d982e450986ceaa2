/**
 * @module stores/file-kv
 * The Node entry's embedded default store: a {@link KvStore} kept in one JSON file on disk, so a
 * restart keeps what the edge learned and no server is needed (docs/stores.md).
 *
 * Durability: a `put`/`delete` resolves only once the whole file, with that change, is on disk:
 * written to a temporary file, fsync'd, renamed over the old one (write-file-atomic), and the
 * directory fsync'd so the rename itself survives a power cut. Concurrent changes share one file
 * write (group commit): while a write runs, later changes queue and go out together in the next.
 * A crash mid-write leaves the old file whole plus a temporary file, which the next start removes.
 *
 * At start: one process per file (./store-lock.ts); a truncated or corrupt file is reported in
 * one line, kept aside as `<file>.corrupt-<time>` and the store starts empty (the edge re-learns
 * tool schemas from the origin); a file that cannot be read at all (permissions) fails the start.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import writeFileAtomic from 'write-file-atomic'
import { MemoryKv, type KvEntry } from './memory-kv'
import { lockStoreFile, type StoreLock } from './store-lock'

/** The `format` field of a store file (version 1 of the layout in docs/stores.md). */
export const FILE_FORMAT = 'mcp-edge-kv'

/** The store file cannot be used (unreadable, or cannot be kept aside); the message names the file. */
export class StoreFileError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'StoreFileError'
  }
}

/** Options of {@link FileKv}. */
export interface FileKvOptions {
  /** Epoch ms (TTL tests). */
  now?: () => number
  /** Where the one-line start notices go (corrupt file kept aside, temporary files removed); default stderr. */
  warn?: (line: string) => void
}

interface Waiter {
  resolve(): void
  reject(e: unknown): void
}

/** What is wrong with a parsed store file, or null when it is a store file. */
function shapeProblem(parsed: unknown): string | null {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'not a JSON object'
  const o = parsed as Record<string, unknown>
  // Before the format field (the first FileKv): the entries are the object itself.
  const entries = o.format === undefined ? o : o.entries
  if (o.format !== undefined && (o.format !== FILE_FORMAT || o.version !== 1))
    return `format ${JSON.stringify(o.format)} version ${JSON.stringify(o.version)} is not ${FILE_FORMAT} version 1`
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) return '"entries" is not an object'
  for (const [k, v] of Object.entries(entries)) {
    const e = v as Partial<KvEntry> | null
    if (typeof e !== 'object' || e === null || typeof e.value !== 'string' || (e.expiresAt !== null && typeof e.expiresAt !== 'number'))
      return `entry ${JSON.stringify(k.slice(0, 80))} is not { value, expiresAt }`
  }
  return null
}

/** File-backed KV namespace; see the module comment. Construct at start (synchronous: lock, load). */
export class FileKv extends MemoryKv {
  /** Absolute path of the store file. */
  readonly file: string
  private readonly lock: StoreLock
  private pending: Waiter[] = []
  /** The running write loop, if any (resolves when the file holds every change queued so far). */
  private writing: Promise<void> | null = null
  private closed = false
  /** File writes done (each may carry many changes); for tests and the benchmark. */
  readonly stats = { writes: 0 }

  /**
   * Opens (or creates) the store file.
   * @throws StoreLockedError when another live process has the file open
   * @throws StoreFileError when the file cannot be read, or a corrupt one cannot be kept aside
   */
  constructor(file: string, opts: FileKvOptions = {}) {
    super(opts.now)
    this.file = resolve(file)
    const warn = opts.warn ?? ((line: string) => void process.stderr.write(line + '\n'))
    const dir = dirname(this.file)
    try {
      mkdirSync(dir, { recursive: true })
    } catch (e) {
      throw new StoreFileError(`store file ${this.file}: cannot create its directory (${(e as NodeJS.ErrnoException).code ?? String(e)})`)
    }
    try {
      this.lock = lockStoreFile(this.file, 'share one store between edges with STORE_URL=redis://... (docs/stores.md)')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code) throw new StoreFileError(`store file ${this.file}: cannot create its lock file (${(e as NodeJS.ErrnoException).code})`)
      throw e
    }
    try {
      this.removeTempFiles(dir, warn)
      this.load(warn)
    } catch (e) {
      this.lock.release()
      throw e
    }
  }

  /** Temporary files of this store left by a crash mid-write (write-file-atomic's `<file>.<n>`, the first FileKv's `<file>.<pid>.tmp`). */
  private removeTempFiles(dir: string, warn: (line: string) => void): void {
    const base = basename(this.file)
    const removed: string[] = []
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(base + '.')) continue
      const rest = name.slice(base.length + 1)
      if (!/^\d+$/.test(rest) && !/^\d+\.tmp$/.test(rest)) continue
      try {
        unlinkSync(join(dir, name))
        removed.push(name)
      } catch {
        // gone meanwhile
      }
    }
    if (removed.length > 0)
      warn(
        `store: removed ${removed.length} temporary file(s) of ${this.file} left by an interrupted write (${removed.slice(0, 3).join(', ')}${removed.length > 3 ? ', ...' : ''}); no acknowledged write was in them`
      )
  }

  private load(warn: (line: string) => void): void {
    let text: string
    try {
      text = readFileSync(this.file, 'utf8')
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return
      throw new StoreFileError(`store file ${this.file} cannot be read (${code ?? String(e)})`)
    }
    let problem: string | null
    let parsed: unknown
    if (text.length === 0) problem = 'empty (0 bytes)'
    else {
      try {
        parsed = JSON.parse(text)
        problem = shapeProblem(parsed)
      } catch (e) {
        problem = `truncated or not JSON (${(e as Error).message.split('\n')[0]}; ${Buffer.byteLength(text)} bytes)`
      }
    }
    if (problem !== null) {
      const stamp = `${this.file}.corrupt-${new Date(this.now())
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\.\d+Z$/, 'Z')}`
      // Never over an earlier corrupt copy (two bad starts within one second).
      let aside = stamp
      for (let n = 1; existsSync(aside); n++) aside = `${stamp}-${n}`
      try {
        renameSync(this.file, aside)
      } catch (e) {
        throw new StoreFileError(
          `store file ${this.file} is corrupt: ${problem}; it cannot be kept aside as ${aside} (${(e as NodeJS.ErrnoException).code ?? String(e)}); move it away by hand`
        )
      }
      warn(
        `store: ${this.file} is corrupt: ${problem}; kept aside as ${aside}; starting with an empty store: tool schemas are learned again from the origin, schemas pushed through the admin API must be pushed again`
      )
      return
    }
    const o = parsed as Record<string, unknown>
    const entries = (o.format === undefined ? o : o.entries) as Record<string, KvEntry>
    const now = this.now()
    for (const [k, v] of Object.entries(entries)) if (v.expiresAt === null || v.expiresAt > now) this.data.set(k, { value: v.value, expiresAt: v.expiresAt })
  }

  /** Stores `value`; resolves once the file with it is on disk. @throws StoreFileError when the write fails (the value stays in memory and goes out with the next write) */
  override async put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void> {
    this.open()
    this.set(key, value, options)
    return this.commit()
  }

  /** Removes `key`; resolves once the file without it is on disk. @throws StoreFileError when the write fails */
  override async delete(key: string): Promise<void> {
    this.open()
    await super.delete(key)
    return this.commit()
  }

  private open(): void {
    if (this.closed) throw new StoreFileError(`store file ${this.file} is closed`)
  }

  /** Queues the current state for writing; resolves when a write that started after this call is on disk. */
  private commit(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ resolve, reject })
      this.writing ??= this.writeLoop()
    })
  }

  private async writeLoop(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending
      this.pending = []
      try {
        await this.writeFile()
        this.stats.writes++
        for (const w of batch) w.resolve()
      } catch (e) {
        const err = new StoreFileError(`store file ${this.file} could not be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
        for (const w of batch) w.reject(err)
      }
    }
    this.writing = null
  }

  /** Writes every live entry: temp file, fsync, rename (write-file-atomic), then fsync of the directory. */
  private async writeFile(): Promise<void> {
    const now = this.now()
    const entries: Record<string, KvEntry> = {}
    for (const [k, e] of this.data)
      if (e.expiresAt === null || e.expiresAt > now) Object.defineProperty(entries, k, { value: e, enumerable: true, writable: true, configurable: true })
    await writeFileAtomic(this.file, JSON.stringify({ format: FILE_FORMAT, version: 1, entries }), { fsync: true, mode: 0o600 })
    const dir = await open(dirname(this.file), 'r')
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
  }

  /** Resolves when every change made so far is written (or its write failed: the put itself rejected). */
  async flush(): Promise<void> {
    await this.writing
  }

  /**
   * Flushes, then releases the lock; later `put`/`delete` reject. Idempotent. The Node entry awaits
   * it on shutdown (RunningEdge.close).
   */
  async close(): Promise<void> {
    if (this.closed) return
    try {
      await this.flush()
    } finally {
      this.closed = true
      this.lock.release()
    }
  }
}
