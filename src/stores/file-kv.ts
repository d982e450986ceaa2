/**
 * @module stores/file-kv
 * The Node entry's embedded default store: a {@link KvStore} kept in one JSON file on disk, so a
 * restart keeps what the edge learned and no server is needed (docs/stores.md).
 *
 * Durability: a `put`/`putMany`/`delete` resolves only once the whole file, with that change, is
 * on disk: written to a temporary file `<file>.mcp-edge-<pid>-<n>.tmp`, fsync'd, renamed over the
 * old one, and the directory fsync'd so the rename itself survives a power cut. Concurrent changes
 * share one file write (group commit): while a write runs, later changes queue and go out together
 * in the next. A `putMany` is in one write, whole or not at all. Every change is all-or-nothing in
 * memory too: when its write fails, the change is undone (memory goes back to the file's entries
 * plus the changes queued since), so a put the caller was told failed is not read back and is
 * not carried by the next write. A crash mid-write leaves the old file whole plus a temporary
 * file, which the next start removes.
 *
 * Touches only what it made: the temporary and lock files have names no user file has (the
 * `mcp-edge` part), and the start removes a temporary file only when it has that name and holds
 * edge content. At start: the folder must exist (only the default `.edge-data` is created, one
 * level, never a recursive mkdir: Node 20's spins at 100% CPU under /proc); symlinks are followed,
 * so the lock is the real file's and a second path to it is refused; a file with more than one
 * hard link is refused; one process per file (./store-lock.ts); a file that is not an edge store
 * (not JSON, JSON with comments, another program's JSON, empty) is refused and left exactly as it
 * was; an edge store cut off or damaged is reported in one line, kept aside as
 * `<file>.corrupt-<time>` and the store starts empty (the edge re-learns tool schemas from the
 * origin); a file that cannot be read at all (permissions) fails the start.
 */
import { constants as bufferConstants } from 'node:buffer'
import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, renameSync, statSync, unlinkSync } from 'node:fs'
import { open, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import type { KvPut } from '../core/ports'
import { checkKey } from './kv-rules'
import { MemoryKv, type KvEntry } from './memory-kv'
import { readRegular } from './safe-read'
import { lockStoreFile, type StoreLock } from './store-lock'
import { EdgeError } from '../core/errors'

/** The `format` field of a store file (version 1 of the layout in docs/stores.md). */
export const FILE_FORMAT = 'mcp-edge-kv'

/** How every store file this store writes begins (JSON.stringify of `{ format, version, entries }`). */
const HEADER = `{"format":"${FILE_FORMAT}"`
/** How a store file of the first FileKv (entries at the top level) begins: `{"<key>":{"value":"`. */
const FIRST_HEADER = /^\{"(?:[^"\\]|\\.)*":\{"value":"/

/**
 * The most bytes the store reads of a file (the store itself, a temporary file): the longest
 * string V8 holds, so the longest JSON text a write of the store can produce (about 512 MiB on
 * 64-bit Node 20). A file beyond it was not written by the store.
 */
export const MAX_STORE_BYTES = bufferConstants.MAX_STRING_LENGTH

/**
 * The folder name of the default store (`.edge-data/kv.json`). The first FileKv wrote an empty
 * store as `{}`; only in a folder of this name is a `{}` taken as such a store (docs/stores.md,
 * "Upgrading from an earlier version"): elsewhere it is a user's file (`.prettierrc.json`).
 */
const DEFAULT_FOLDER = '.edge-data'

/** The store file cannot be used (unreadable, not an edge store, cannot be kept aside); the message names the file. */
export class StoreFileError extends EdgeError {
  override readonly name = 'StoreFileError'
  override readonly code = 'EDGE_ERR_STORE_FILE'
  constructor(message: string) {
    super(message)
  }
}

/** Options of {@link FileKv}. */
export interface FileKvOptions {
  /** Epoch ms (TTL tests). */
  now?: () => number
  /** Where the one-line start notices go (corrupt file kept aside, temporary files removed); default stderr. */
  warn?: (line: string) => void
  /** Create the store file's folder (one level, not its parents) when it is missing; default false: a missing folder is refused. */
  createFolder?: boolean
  /** The setting the path came from, named in the refusals (e.g. `STORE_FILE`); default none. */
  variable?: string
}

/** One change of a put, putMany or delete: the key and its new entry, null for a removal. */
type Change = readonly [key: string, entry: KvEntry | null]

/** A call waiting for the file write that carries its changes. */
interface Waiter {
  changes: readonly Change[]
  resolve(): void
  reject(e: unknown): void
}

/**
 * What a text found at a store path is:
 * - `store`: an edge store file (`{ "format": "mcp-edge-kv", "version": 1, "entries" }`, or the
 *   first FileKv's entries at the top level, `{}` when empty), with its entries;
 * - `damaged`: edge content, cut off or broken (it begins as this store writes its files): kept
 *   aside by the store, which starts empty;
 * - `newer`: an edge store of a later format version: refused, left as it is;
 * - `foreign`: anything else (empty, not JSON, JSON with comments, another program's JSON, `{}`
 *   outside a `.edge-data` folder): refused, left as it is; `hint` says what to do when there is
 *   more to say than "give another path".
 */
export type StoreText =
  | { kind: 'store'; entries: Record<string, KvEntry> }
  | { kind: 'damaged'; problem: string }
  | { kind: 'newer'; problem: string }
  | { kind: 'foreign'; problem: string; hint?: string }

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** The problem of an entries object, or null when every entry is `{ value: string, expiresAt: number | null }`. */
function entriesProblem(entries: Record<string, unknown>, legacy: boolean): string | null {
  for (const [k, v] of Object.entries(entries)) {
    const ok = isObj(v) && typeof v.value === 'string' && (v.expiresAt === null || typeof v.expiresAt === 'number' || (legacy && v.expiresAt === undefined))
    if (!ok) return `entry ${JSON.stringify(k.slice(0, 80))} is not { value, expiresAt }`
  }
  return null
}

/** Options of {@link classifyStoreText}. */
export interface ClassifyOptions {
  /**
   * The file is in the default store's folder (`.edge-data`): a text of exactly `{}` there is an
   * empty store of the first FileKv; anywhere else it is refused as not provably edge content.
   */
  inDefaultFolder?: boolean
}

/** True when `file`'s folder is named `.edge-data` (see {@link ClassifyOptions.inDefaultFolder}). */
export function inDefaultFolder(file: string): boolean {
  return basename(dirname(resolve(file))) === DEFAULT_FOLDER
}

/**
 * Says which {@link StoreText} `text` is (pure; reads nothing). A file of the first FileKv is taken
 * as a store only when it is exactly what that version wrote: `JSON.stringify` of entries that are
 * each exactly `{ value, expiresAt }` (no white space, no other field), and `{}` only with
 * `inDefaultFolder`.
 */
export function classifyStoreText(text: string, opts: ClassifyOptions = {}): StoreText {
  const ours = text.startsWith(HEADER) || FIRST_HEADER.test(text)
  if (text.length === 0) return { kind: 'foreign', problem: 'empty (0 bytes)' }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    const problem = `${ours ? 'truncated' : 'not JSON'} (${(e as Error).message.split('\n')[0]}; ${Buffer.byteLength(text)} bytes)`
    return { kind: ours ? 'damaged' : 'foreign', problem }
  }
  if (!isObj(parsed)) return { kind: 'foreign', problem: 'not a JSON object' }
  if (parsed.format === undefined) {
    if (Object.keys(parsed).length === 0) {
      if (text === '{}' && opts.inDefaultFolder) return { kind: 'store', entries: {} }
      const hint = 'if it is an empty store of an earlier version, delete it (it holds no entries)'
      return {
        kind: 'foreign',
        problem: `it holds an empty JSON object (${JSON.stringify(text.length > 20 ? text.slice(0, 20) + '...' : text)}), which is not provably edge content (an empty store of the first edge version is exactly {} in a ${DEFAULT_FOLDER} folder); ${hint}`,
        hint,
      }
    }
    const problem = entriesProblem(parsed, true)
    if (problem !== null) return { kind: ours ? 'damaged' : 'foreign', problem }
    // The first FileKv wrote JSON.stringify of { value, expiresAt } entries: anything else (white space, other fields) is not its file.
    const exact = Object.values(parsed).every((v) => {
      const keys = Object.keys(v as object)
      return keys.length === 2 && keys[0] === 'value' && keys[1] === 'expiresAt'
    })
    if (!exact || JSON.stringify(parsed) !== text)
      return { kind: 'foreign', problem: 'JSON with entries of the shape { value, expiresAt }, but not as an edge wrote them (white space, key order or other fields)' }
    return { kind: 'store', entries: parsed as unknown as Record<string, KvEntry> }
  }
  if (parsed.format !== FILE_FORMAT) return { kind: 'foreign', problem: `format ${JSON.stringify(parsed.format).slice(0, 80)} is not ${FILE_FORMAT}` }
  if (parsed.version !== 1)
    return {
      kind: 'newer',
      problem: `format ${FILE_FORMAT} version ${JSON.stringify(parsed.version).slice(0, 20)} (this edge reads version 1: it was written by another version of the edge)`,
    }
  if (!isObj(parsed.entries)) return { kind: 'damaged', problem: '"entries" is not an object' }
  const problem = entriesProblem(parsed.entries, false)
  if (problem !== null) return { kind: 'damaged', problem }
  return { kind: 'store', entries: parsed.entries as unknown as Record<string, KvEntry> }
}

/** The name of a temporary file of a store file named `base` (this version's form). */
function tempNamePattern(base: string): RegExp {
  return new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.mcp-edge-(\\d+)-\\d+\\.tmp$`)
}

/** True when `pid` is a live process (EPERM: alive, another user's). */
function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The real path of a store file: its folder's real path, and a symlink at the path itself
 * followed (also a dangling one: the store is then created at its target).
 * @throws the file system's error (ELOOP past 40 links, ENOENT for a missing folder of a link's target)
 */
function realStorePath(given: string): string {
  let p = given
  for (let hops = 0; hops < 40; hops++) {
    const full = join(realpathSync(dirname(p)), basename(p))
    let link = false
    try {
      link = lstatSync(full).isSymbolicLink()
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
    }
    if (!link) return full
    p = resolve(dirname(full), readlinkSync(full))
  }
  throw Object.assign(new Error('too many symbolic links'), { code: 'ELOOP' })
}

/** File-backed KV namespace; see the module comment. Construct at start (synchronous: lock, load). */
export class FileKv extends MemoryKv {
  /** The entries are kept in the store file. */
  override readonly persistent: boolean = true
  /** Real absolute path of the store file (symlinks followed). */
  readonly file: string
  private readonly lock: StoreLock
  private pending: Waiter[] = []
  /**
   * The entries of the last write that worked (at start: those loaded), i.e. what the file holds.
   * A failed write puts memory back to this plus the changes queued since: what the caller was
   * told failed is neither read back nor carried by a later write.
   */
  private durable = new Map<string, KvEntry>()
  private readonly warn: (line: string) => void
  /** The running write loop, if any (resolves when the file holds every change queued so far). */
  private writing: Promise<void> | null = null
  private closed = false
  /** Temporary files written by this process (the `<n>` of their name). */
  private tempSeq = 0
  /** Permission bits each write gives the file: those of the file found at start (kept), 0o600 for a new one. */
  private mode = 0o600
  /** File writes done (each may carry many changes); for tests and the benchmark. */
  readonly stats = { writes: 0 }

  /**
   * Opens (or creates) the store file.
   * @throws StoreLockedError when another live process has the file open (under any path to it)
   * @throws StoreFileError when the folder is missing, the file has several hard links, cannot be
   *   read, is not an edge store (left as it is), or a damaged one cannot be kept aside
   */
  constructor(file: string, opts: FileKvOptions = {}) {
    super(opts.now)
    const given = resolve(file)
    const warn = opts.warn ?? ((line: string) => void process.stderr.write(line + '\n'))
    this.warn = warn
    const named = opts.variable ? `${opts.variable}=${file}` : `store file ${given}`
    const dir = dirname(given)
    let folder: ReturnType<typeof statSync> | undefined
    try {
      folder = statSync(dir)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' || !opts.createFolder)
        throw new StoreFileError(
          code === 'ENOENT'
            ? `${named}: the folder ${dir} does not exist; create it first (mkdir -p ${dir}) or choose a path in an existing folder`
            : `${named}: its folder ${dir} cannot be used (${code ?? String(e)})`
        )
      try {
        // One level only (the default .edge-data in the working folder), never recursive.
        mkdirSync(dir)
      } catch (e2) {
        if ((e2 as NodeJS.ErrnoException).code !== 'EEXIST')
          throw new StoreFileError(`${named}: cannot create its folder ${dir} (${(e2 as NodeJS.ErrnoException).code ?? String(e2)})`)
      }
    }
    if (folder && !folder.isDirectory()) throw new StoreFileError(`${named}: ${dir} is not a folder`)
    try {
      this.file = realStorePath(given)
    } catch (e) {
      throw new StoreFileError(`${named}: the path cannot be resolved (${(e as NodeJS.ErrnoException).code ?? String(e)})`)
    }
    const shown = this.file === given ? given : `${this.file} (given as ${given})`
    // Before the lock: a FIFO, a device or a folder at the path is refused without a lock file made beside it.
    let kind: ReturnType<typeof lstatSync> | undefined
    try {
      kind = lstatSync(this.file)
    } catch {
      // missing (a new store), or decided by the read below
    }
    if (kind && !kind.isFile() && !kind.isDirectory())
      throw new StoreFileError(
        `${named} cannot be read (${kind.isFIFO() ? 'a FIFO' : kind.isSocket() ? 'a socket' : 'a device'}, not a regular file); it was left as it is: give the path of an edge store file, or of a new one`
      )
    try {
      // The earlier versions' lock, `<path>.lock`, at the given path and at the real one: read, never removed.
      const legacy = [...new Set([`${given}.lock`, `${this.file}.lock`])]
      this.lock = lockStoreFile(this.file, 'share one store between edges with STORE_URL=redis://... (docs/stores.md)', shown, legacy)
    } catch (e) {
      if (!(e instanceof EdgeError) && (e as NodeJS.ErrnoException).code)
        throw new StoreFileError(`store file ${shown}: cannot create its lock file (${(e as NodeJS.ErrnoException).code})`)
      throw e
    }
    try {
      this.load(warn, named)
      this.durable = new Map(this.data)
      this.removeTempFiles(warn)
    } catch (e) {
      this.lock.release()
      throw e
    }
  }

  /**
   * Temporary files of this store left by a crash mid-write: `<file>.mcp-edge-<pid>-<n>.tmp`, a
   * regular file (a symlink, FIFO or device at that name is neither followed nor opened), and
   * either holding a whole edge store of this format, with a pid that is not a live process other
   * than this one (a live one may be another edge writing it), or, empty or cut off, named with the
   * pid of the edge whose stale lock this start took over (its writes: only the lock's owner writes
   * them; kill -9 between create and write leaves an empty one). Anything else at such a name is
   * left as it is and named in one line: a leftover is harmless, as every write creates a new name
   * exclusively. Files of the earlier versions' temporary names
   * (`<file>.<digits>`, `<file>.<pid>.tmp`) are left alone: those are the names of a user's rotated
   * logs and numbered copies.
   */
  private removeTempFiles(warn: (line: string) => void): void {
    const dir = dirname(this.file)
    const pattern = tempNamePattern(basename(this.file))
    const removed: string[] = []
    const left: string[] = []
    for (const name of readdirSync(dir)) {
      const m = pattern.exec(name)
      if (!m) continue
      const path = join(dir, name)
      try {
        const pid = Number(m[1])
        const found = readRegular(path, MAX_STORE_BYTES, false)
        if (found.kind === 'missing') continue
        const text = found.kind === 'read' ? found.bytes.toString('utf8') : ''
        const whole = found.kind === 'read' && text.startsWith(HEADER) && classifyStoreText(text).kind === 'store'
        // A write of the edge whose stale lock this start took over, cut by its end (kill -9 between create and write, or mid-write).
        const cut = found.kind === 'read' && pid === this.lock.tookOverFrom && (text.startsWith(HEADER) || HEADER.startsWith(text))
        if (!(whole && (pid === process.pid || !pidAlive(pid))) && !cut) {
          left.push(name)
          continue
        }
        unlinkSync(path)
        removed.push(name)
      } catch {
        // gone meanwhile, or not ours to read
        left.push(name)
      }
    }
    const some = (names: string[]) => `${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}`
    if (removed.length > 0)
      warn(`store: removed ${removed.length} temporary file(s) of ${this.file} left by an interrupted write (${some(removed)}); no acknowledged write was in them`)
    if (left.length > 0)
      warn(
        `store: left ${left.length} file(s) named like temporary files of ${this.file} as they are (${some(left)}): not a whole store written by an edge that is gone; remove them by hand if they are leftovers of an interrupted write`
      )
  }

  private load(warn: (line: string) => void, named: string): void {
    let text: string
    try {
      const st = statSync(this.file)
      // Each write replaces the file: the other names would keep an old copy, and an edge started on one of them would share this store.
      if (st.isFile() && st.nlink > 1)
        throw new StoreFileError(
          `store file ${this.file} has ${st.nlink} hard links (another path names the same file); give the edge a file of its own (copy it to a new path); it was left as it is`
        )
      if (st.isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR' })
      // O_NONBLOCK and fstat on the open descriptor: a FIFO or a device put there since the check above is not read.
      const read = readRegular(this.file, MAX_STORE_BYTES, false)
      if (read.kind === 'missing') return
      if (read.kind === 'not-regular') throw new StoreFileError(`store file ${this.file} cannot be read (${read.what}, not a regular file); it was left as it is`)
      if (read.kind === 'too-large')
        throw new StoreFileError(`${named} is not an edge store file: ${read.size} bytes, more than a store can hold (${MAX_STORE_BYTES}); it was left as it is`)
      text = read.bytes.toString('utf8')
      this.mode = read.mode
    } catch (e) {
      if (e instanceof StoreFileError) throw e
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'ENOENT') return
      throw new StoreFileError(`store file ${this.file} cannot be read (${code ?? String(e)})`)
    }
    const found = classifyStoreText(text, { inDefaultFolder: inDefaultFolder(this.file) })
    if (found.kind === 'foreign' || found.kind === 'newer')
      throw new StoreFileError(`${named} is not an edge store file of this version: ${found.problem}; it was left as it is: give the path of an edge store file, or of a new one`)
    if (found.kind === 'damaged') {
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
          `store file ${this.file} is corrupt: ${found.problem}; it cannot be kept aside as ${aside} (${(e as NodeJS.ErrnoException).code ?? String(e)}); move it away by hand`
        )
      }
      warn(
        `store: ${this.file} is corrupt: ${found.problem}; kept aside as ${aside}; starting with an empty store: tool schemas are learned again from the origin, schemas pushed through the admin API must be pushed again`
      )
      return
    }
    const now = this.now()
    for (const [k, v] of Object.entries(found.entries)) {
      const expiresAt = v.expiresAt ?? null
      if (expiresAt === null || expiresAt > now) this.data.set(k, { value: v.value, expiresAt })
    }
  }

  /**
   * Stores `value`; resolves once the file with it is on disk.
   * @throws TypeError/RangeError for a bad key, value or TTL: then nothing changed
   * @throws StoreFileError when the write fails: then the put is undone (memory as before the call)
   */
  override async put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void> {
    this.open()
    return this.commit([this.checked(key, value, options)])
  }

  /**
   * Stores every entry in one file write: on disk all together or, when the write fails, none of
   * them, and none in memory either (memory as before the call; a later write does not carry them).
   * @throws TypeError/RangeError for a bad key, value or TTL: then nothing changed
   * @throws StoreFileError when the write fails
   */
  override async putMany(entries: readonly KvPut[]): Promise<void> {
    this.open()
    return this.commit(this.checkedMany(entries))
  }

  /**
   * Removes `key`; resolves once the file without it is on disk.
   * @throws TypeError/RangeError for a bad key
   * @throws StoreFileError when the write fails: then the key is back as it was (value and expiry)
   */
  override async delete(key: string): Promise<void> {
    this.open()
    checkKey(key)
    return this.commit([[key, null]])
  }

  private open(): void {
    if (this.closed) throw new StoreFileError(`store file ${this.file} is closed`)
  }

  private apply(changes: readonly Change[]): void {
    for (const [k, e] of changes) {
      if (e === null) this.data.delete(k)
      else this.data.set(k, e)
    }
  }

  /** Applies `changes` in memory and queues them for writing; resolves when a write that started after this call is on disk. */
  private commit(changes: readonly Change[]): Promise<void> {
    this.apply(changes)
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ changes, resolve, reject })
      this.writing ??= this.writeLoop()
    })
  }

  /** Memory back to the file's entries plus the changes queued since the failed write began, in their order. */
  private rollBack(): void {
    this.data.clear()
    for (const [k, e] of this.durable) this.data.set(k, e)
    for (const w of this.pending) this.apply(w.changes)
  }

  private async writeLoop(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending
      this.pending = []
      try {
        this.durable = await this.writeFile()
        this.stats.writes++
        for (const w of batch) w.resolve()
      } catch (e) {
        // Before the next write takes its snapshot (this loop, same tick): it carries none of this batch.
        this.rollBack()
        const err = new StoreFileError(`store file ${this.file} could not be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`)
        for (const w of batch) w.reject(err)
      }
    }
    this.writing = null
  }

  /**
   * Writes every live entry: `<file>.mcp-edge-<pid>-<n>.tmp` created exclusively, written,
   * fsync'd, renamed over the store file, then the folder fsync'd. Resolves with the entries
   * written (what the file now holds). The rename is the commit point: a failure before it
   * rejects and leaves the file as it was (the temporary file removed); a failure to fsync the
   * folder after it cannot undo the rename (a reader or a restart already sees the new file), so
   * the write counts as done and one line says it may not survive a power cut.
   *
   * Why not write-file-atomic (6.0.0, used before): its temporary file is `<file>.<murmurhash>`,
   * e.g. `kv.json.499033397`, the very form of a user's numbered files (`app.log.1`,
   * `app.log.20261201`), so a clean-up of its leftovers deleted them; it opens that name with `w`
   * (no O_EXCL), truncating a file that has it; and it has no option to choose the name (its
   * options: chown, mode, fsync, encoding, tmpfileCreated). These 15 lines do the same steps.
   */
  private async writeFile(): Promise<Map<string, KvEntry>> {
    const now = this.now()
    const entries: Record<string, KvEntry> = {}
    const written = new Map<string, KvEntry>()
    for (const [k, e] of this.data)
      if (e.expiresAt === null || e.expiresAt > now) {
        Object.defineProperty(entries, k, { value: e, enumerable: true, writable: true, configurable: true })
        written.set(k, e)
      }
    const text = JSON.stringify({ format: FILE_FORMAT, version: 1, entries })
    let tmp = ''
    let fh: Awaited<ReturnType<typeof open>> | undefined
    for (let attempt = 0; fh === undefined; attempt++) {
      tmp = `${this.file}.mcp-edge-${process.pid}-${++this.tempSeq}.tmp`
      try {
        fh = await open(tmp, 'wx', 0o600)
        // The mode of the file found at start is kept (a file the store adopted is not made 0600).
        if (this.mode !== 0o600) await fh.chmod(this.mode).catch(() => undefined)
      } catch (e) {
        // A file of that name from an earlier life of this pid: never opened over, the next number is taken.
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 10) throw e
      }
    }
    try {
      try {
        await fh.writeFile(text, 'utf8')
        await fh.sync()
      } finally {
        await fh.close()
      }
      await rename(tmp, this.file)
    } catch (e) {
      await unlink(tmp).catch(() => undefined)
      throw e
    }
    try {
      const dir = await open(dirname(this.file), 'r')
      try {
        await dir.sync()
      } finally {
        await dir.close()
      }
    } catch (e) {
      this.warn(
        `store: ${this.file} was written, but its folder could not be synced (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): the write may not survive a power cut`
      )
    }
    return written
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
