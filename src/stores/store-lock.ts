/**
 * @module stores/store-lock
 * One process per store file (docs/stores.md, "The lock"): `<file>.mcp-edge.lock` is created with
 * O_EXCL and holds `{ pid, host, since }` of its owner. A lock whose owner is gone is stale and
 * taken over at once. The name is one no user file has: the lock of the first versions,
 * `<file>.lock`, is the name of a user's file beside `STORE_FILE=proj/yarn` (`yarn.lock`), and
 * taking over a "stale" one deleted it. That old name is now only read, never created or removed:
 * an edge of an earlier version holding it (live pid on this host) still refuses the start.
 * `file` is the store file's real path (symlinks followed, ./file-kv.ts), so two paths to one file
 * meet at one lock. The lock name itself is never followed or waited on: it is read with
 * O_NOFOLLOW and O_NONBLOCK, only as a regular file and at most 4 KiB (./safe-read.ts), so a FIFO
 * there (the read blocked the start for ever) or a symlink to /dev/zero (memory grew without end)
 * is refused in one line, as is a regular file there that is not `{ pid, host }`: only a lock of
 * the edge whose owner is gone (or an empty one, cut between create and write) is taken over.
 *
 * Why not proper-lockfile: it decides staleness from an mtime it refreshes on a timer, so after a
 * `kill -9` (or an OOM kill) the restarted edge is refused until the stale period has passed (at
 * least 5 s, 10 s by default, per its documented `stale` option; the six kill -9 restarts of
 * test/stores/file-kv-process.test.ts take 2.9 s in all here, and would take 30 s or more), and an
 * event loop blocked longer than that period marks the lock compromised while the edge still
 * writes (stalls of 12 s and more were measured; docs/reliability.md). The store is a local file, so the kernel's process table
 * answers "is the owner alive" exactly (`kill(pid, 0)`), and a restart after a crash takes over at
 * once. The cost: the lock is only for one machine (a lock held from another host name is refused,
 * never guessed stale); a network file system shared by hosts needs the shared store (Redis).
 */
import { closeSync, lstatSync, openSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { EdgeError } from '../core/errors'
import { readRegular } from './safe-read'

/** The store file is locked by a live process (or one this process cannot check). */
export class StoreLockedError extends EdgeError {
  override readonly name = 'StoreLockedError'
  override readonly code = 'EDGE_ERR_STORE_LOCKED'
  constructor(message: string) {
    super(message)
  }
}

/** A held lock; `release` removes the lock file (idempotent, never throws). */
export interface StoreLock {
  readonly path: string
  /**
   * The pid of the edge whose stale lock (its process gone, this host) was taken over, if any: the
   * temporary files named with it are that edge's cut writes (only the lock's owner writes them).
   */
  readonly tookOverFrom?: number
  release(): void
}

interface Owner {
  pid: number
  host: string
  since: string
}

/** The suffix of the lock file's name: `<store file>` + this. */
export const LOCK_SUFFIX = '.mcp-edge.lock'

/** Lock files this process holds (a second store on the same file in one process is refused too). */
const held = new Set<string>()

/** A lock file younger than this with no readable owner is being written by its creator (ms). */
const FRESH_EMPTY_MS = 2_000

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: the process exists but belongs to another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** A lock of the edge is a few dozen bytes (`{ pid, host, since }`); anything larger is not one and is not read (bytes). */
const MAX_LOCK_BYTES = 4096

/**
 * Reads the lock file at `path` without following a symlink or blocking on a FIFO, at most
 * {@link MAX_LOCK_BYTES}. `null`: no file there; `foreign`: something at that name that is not a
 * lock file of the edge (what it is), never removed.
 */
function readOwner(path: string): { text: string; owner: Owner | null } | { foreign: string } | null {
  const found = readRegular(path, MAX_LOCK_BYTES, false)
  if (found.kind === 'missing') return null
  if (found.kind === 'not-regular') return { foreign: found.what }
  if (found.kind === 'too-large') return { foreign: `a file of ${found.size} bytes` }
  const text = found.bytes.toString('utf8')
  try {
    const o = JSON.parse(text) as Partial<Owner>
    if (Number.isInteger(o.pid) && typeof o.host === 'string') return { text, owner: { pid: o.pid!, host: o.host, since: String(o.since ?? '') } }
  } catch {
    // a lock file being written (empty), or another file: decided below
  }
  return { text, owner: null }
}

/**
 * Takes the lock of a store file: creates `<file>.mcp-edge.lock` exclusively, taking over a stale
 * one (its owner's pid is gone on this host, or is this very pid from an earlier life in a fresh
 * pid namespace, e.g. a restarted container). Refuses when `legacyLocks` (the earlier versions'
 * `<path>.lock`) names a live edge on this host; such a file is never removed.
 * @param file real absolute path of the store file
 * @param hint what to suggest in the error (e.g. the shared store)
 * @param shown how the file is named in the error (e.g. `/real/kv.json (given as /x/link)`); default `file`
 * @param legacyLocks paths of the earlier versions' lock files to honour (read only)
 * @throws StoreLockedError naming the file and the owner when a live process holds it
 * @throws the file system's error when the lock file cannot be created (e.g. EACCES)
 */
export function lockStoreFile(file: string, hint: string, shown = file, legacyLocks: string[] = []): StoreLock {
  const path = `${file}${LOCK_SUFFIX}`
  const me: Owner = { pid: process.pid, host: hostname(), since: new Date().toISOString() }
  const refuse = (why: string) => new StoreLockedError(`store file ${shown} is in use by ${why}; one process per store file: give each edge its own STORE_FILE, or ${hint}`)
  if (held.has(path)) throw refuse('this process already')
  for (const old of legacyLocks) {
    // Read only: a user's file of that name (yarn.lock) is not JSON of this shape and is ignored.
    let found: ReturnType<typeof readOwner>
    try {
      // A FIFO, a symlink or a large file of that name is not a lock (and is not read).
      found = readOwner(old)
    } catch {
      continue
    }
    const o = found !== null && 'owner' in found ? found.owner : null
    if (o && o.host === me.host && o.pid !== me.pid && alive(o.pid)) throw refuse(`an edge of an earlier version, pid ${o.pid} (since ${o.since}; its lock file is ${old})`)
  }
  let tookOverFrom: number | undefined
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644)
      try {
        writeSync(fd, JSON.stringify(me))
      } finally {
        closeSync(fd)
      }
      held.add(path)
      const mine = JSON.stringify(me)
      // A process that exits without closing its store (process.exit) leaves no lock behind.
      const onExit = () => lock.release()
      const lock: StoreLock = {
        path,
        ...(tookOverFrom !== undefined && tookOverFrom !== me.pid ? { tookOverFrom } : {}),
        release() {
          if (!held.delete(path)) return
          process.removeListener('exit', onExit)
          try {
            // Only our own lock: never remove one another process took over.
            const now = readOwner(path)
            if (now !== null && 'text' in now && now.text === mine) unlinkSync(path)
          } catch {
            // already gone
          }
        },
      }
      process.once('exit', onExit)
      return lock
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
    }
    const found = readOwner(path)
    if (found === null) continue // released meanwhile
    if ('foreign' in found)
      throw new StoreLockedError(
        `store file ${shown}: its lock file name ${path} is taken by ${found.foreign}, not a lock of the edge; it was left as it is: remove or rename it if it is not yours, or give STORE_FILE another path`
      )
    const { owner } = found
    if (owner === null && found.text !== '')
      throw new StoreLockedError(
        `store file ${shown}: its lock file name ${path} holds a file that is not a lock of the edge (${Buffer.byteLength(found.text)} bytes, not { pid, host }); it was left as it is: remove or rename it if it is not yours, or give STORE_FILE another path`
      )
    if (owner === null) {
      // Empty: a lock being written (its creator is between create and write), or cut by a crash there.
      let age = Infinity
      try {
        age = Date.now() - lstatSync(path).mtimeMs
      } catch {
        continue
      }
      if (age < FRESH_EMPTY_MS) throw refuse('another process that is starting (its lock file is being written)')
    } else if (owner.host !== me.host) {
      throw refuse(`pid ${owner.pid} on host ${owner.host} (since ${owner.since}; if that host no longer runs it, remove ${path})`)
    } else if (owner.pid !== me.pid && alive(owner.pid)) {
      throw refuse(`another edge, pid ${owner.pid} (since ${owner.since})`)
    }
    // Stale: remove it unless it changed since it was read (another process took it over meanwhile).
    const again = readOwner(path)
    if (again !== null && 'text' in again && again.text === found.text) {
      if (owner !== null) tookOverFrom = owner.pid
      try {
        unlinkSync(path)
      } catch {
        // gone meanwhile
      }
    }
  }
  throw refuse('another process (the lock changed hands repeatedly while starting)')
}
