/**
 * @module cli/store-file-check
 * What a path given as a store file (`STORE_FILE`, `--store-file`) holds, read before the store
 * opens it: the embedded store reads a file it cannot parse as empty and writes its own JSON over
 * it, so a mistyped path (a config file, `/etc/passwd`) would be replaced. The commands refuse
 * such a file with one line and leave it as it is.
 */
import { readFileSync, statSync } from 'node:fs'
import { classifyStoreText, inDefaultFolder } from 'mcp-edge-validator/node'

/**
 * - `missing`: no file there (the store may create it);
 * - `store`: a store file: a JSON object, the entries themselves (`{ key: { value, expiresAt } }`,
 *   `{}` when empty) or `{ "format": "mcp-edge-kv", "version": 1, ... }`;
 * - `damaged`: edge content cut off or broken (it begins as the store writes its files): the
 *   store's own start-up rule keeps it aside;
 * - `newer`: a store file of a later format version (the store refuses it, leaving it as it is);
 * - `foreign`: anything else (empty, not JSON, JSON with comments, JSON that is not a store's shape,
 *   `{}` outside a `.edge-data` folder; `hint` then says what to do);
 * - `unreadable`: exists but cannot be read (`code` says why).
 * The same rule as the store's own (stores/file-kv.ts `classifyStoreText`).
 */
export type StoreFileState = { kind: 'missing' | 'store' | 'damaged' | 'newer' } | { kind: 'foreign'; hint?: string } | { kind: 'unreadable'; code: string }

/** Reads `file` once and says which {@link StoreFileState} it is in; never writes. */
export function storeFileState(file: string): StoreFileState {
  let text: string
  try {
    // A FIFO or a device (/dev/zero) would block or never end the read.
    if (!statSync(file).isFile()) return { kind: 'unreadable', code: 'not a regular file' }
    text = readFileSync(file, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error'
    return code === 'ENOENT' ? { kind: 'missing' } : { kind: 'unreadable', code }
  }
  const found = classifyStoreText(text, { inDefaultFolder: inDefaultFolder(file) })
  return found.kind === 'foreign' ? (found.hint ? { kind: 'foreign', hint: found.hint } : { kind: 'foreign' }) : { kind: found.kind }
}
