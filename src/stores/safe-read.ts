/**
 * @module stores/safe-read
 * Reads a file beside the store (the store itself, its lock, a temporary file) without ever
 * blocking or reading without end: opened with O_NONBLOCK (a FIFO opens at once instead of
 * waiting for a writer), optionally O_NOFOLLOW (a symlink at the name is not followed, so
 * `<lock> -> /dev/zero` is not read), checked with fstat on the open descriptor to be a regular
 * file (a FIFO, a device or a folder is not read), and read only up to a byte bound.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'

/** What {@link readRegular} found: the bytes, or why it did not read them. */
export type SafeRead = { kind: 'read'; bytes: Buffer; mode: number } | { kind: 'missing' } | { kind: 'not-regular'; what: string } | { kind: 'too-large'; size: number }

function describe(st: ReturnType<typeof fstatSync>): string {
  if (st.isFIFO()) return 'a FIFO'
  if (st.isDirectory()) return 'a folder'
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device'
  if (st.isSocket()) return 'a socket'
  if (st.isSymbolicLink()) return 'a symbolic link'
  return 'not a regular file'
}

/**
 * Reads the regular file at `path`, at most `maxBytes` bytes.
 * @param followLinks false: a symlink at `path` is reported `not-regular` ("a symbolic link"), not followed
 * @returns `read` with its bytes and permission bits (`mode & 0o7777`), `missing` (ENOENT),
 *   `not-regular` (what it is instead), or `too-large` (its size in bytes)
 * @throws the file system's error for anything else (EACCES, EIO)
 */
export function readRegular(path: string, maxBytes: number, followLinks: boolean): SafeRead {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (followLinks ? 0 : constants.O_NOFOLLOW))
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return { kind: 'missing' }
    // O_NOFOLLOW on a symlink fails with ELOOP.
    if (code === 'ELOOP' && !followLinks) return { kind: 'not-regular', what: 'a symbolic link' }
    throw e
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) return { kind: 'not-regular', what: describe(st) }
    if (st.size > maxBytes) return { kind: 'too-large', size: st.size }
    const bytes = Buffer.alloc(st.size)
    let n = 0
    while (n < bytes.length) {
      const got = readSync(fd, bytes, n, bytes.length - n, n)
      if (got === 0) break
      n += got
    }
    return { kind: 'read', bytes: bytes.subarray(0, n), mode: st.mode & 0o7777 }
  } finally {
    closeSync(fd)
  }
}
