/**
 * Scratch folders in memory for stores that sync every write: Miniflare keeps Workers KV in SQLite
 * and blob files and syncs each put, about 8.4 ms per put in the default temporary folder on this
 * machine's disk against 2.2 ms on tmpfs (1,050 puts from inside the Worker), and more when a
 * second suite shares the disk. What the tests check is the binding's behaviour, not the disk's.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Linux's memory-backed file system, where there is one. */
const SHM = '/dev/shm'

/**
 * A fresh empty folder named `<prefix>XXXXXX` on tmpfs (/dev/shm) when the machine has one, else
 * in the OS temporary folder; `remove()` deletes it and everything in it (idempotent).
 */
export function memoryDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(existsSync(SHM) ? SHM : tmpdir(), prefix))
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) }
}
