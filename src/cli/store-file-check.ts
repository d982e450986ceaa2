/**
 * @module cli/store-file-check
 * What a path given as a store file (`STORE_FILE`, `--store-file`) holds, read before the store
 * opens it: the embedded store reads a file it cannot parse as empty and writes its own JSON over
 * it, so a mistyped path (a config file, `/etc/passwd`) would be replaced. The commands refuse
 * such a file with one line and leave it as it is.
 */
import { readFileSync } from 'node:fs'

/**
 * - `missing`: no file there (the store may create it);
 * - `store`: a store file: a JSON object, the entries themselves (`{ key: { value, expiresAt } }`,
 *   `{}` when empty) or `{ "format": "mcp-edge-kv", ... }`;
 * - `damaged`: starts like a JSON object but does not parse (a store cut off by a crash: the
 *   store's own start-up rule decides what to do with it);
 * - `foreign`: anything else (not JSON, or JSON that is not a store's shape);
 * - `unreadable`: exists but cannot be read (`code` says why).
 */
export type StoreFileState = { kind: 'missing' | 'store' | 'damaged' | 'foreign' } | { kind: 'unreadable'; code: string }

/** Reads `file` once and says which {@link StoreFileState} it is in; never writes. */
export function storeFileState(file: string): StoreFileState {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error'
    return code === 'ENOENT' ? { kind: 'missing' } : { kind: 'unreadable', code }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { kind: /^\s*\{\s*("|$)/.test(text) ? 'damaged' : 'foreign' }
  }
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
  const isStore = isObject(parsed) && (parsed.format === 'mcp-edge-kv' || Object.values(parsed).every((v) => isObject(v) && typeof v.value === 'string'))
  return { kind: isStore ? 'store' : 'foreign' }
}
