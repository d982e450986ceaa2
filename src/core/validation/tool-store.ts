/**
 * @module core/validation/tool-store
 * The one owner of the tool-record store (docs/design.md §7): its KV layout, the record codec, and
 * every read and write of tool records and name lists. The registry (tool-registry.ts), the private
 * scope bounds (private-scopes.ts), the admin API (http/admin-api.ts) and `mcp-edge schemas` (through
 * `mcp-edge-validator/rules`) all go through it, so a record is built, read and keyed one way.
 *
 * Layout (one namespace, every value JSON text):
 * - `tools:<originId>:<scope>:<toolName>` -> one tool's record ({@link ToolRecord})
 * - `toollist:<originId>:<scope>` -> `{ names, hash, fetchedAt, ttlMs? }` of the last full pull
 *   (the registry deletes the records of names a new pull drops)
 * - `adminlist:<originId>:<scope>` -> `{ names, hash }`: the names pushed through the admin API, kept
 *   apart so a pull does not delete them
 * - `scopes:<originId>:<scope>` -> `{ at }`: a private scope's marker (private-scopes.ts)
 * - `pins:<originId>:public` and `pinserved:<originId>:<scope>`: the origin's tool pins (the approved
 *   digests, sub-digests and definitions; one record per origin, whatever scope a list comes in) and
 *   the last complete list each scope was served (a private scope's expires and goes with the scope);
 *   their keys and codec are delegated to core/pinning/pin-store.ts (a lower layer, so the data
 *   path's pin step can use them) and re-exported here; the pin record also holds the origin's
 *   approved server instructions, and `pininstructions:<originId>` the last ones served
 * Keys of a private scope are written with `expirationTtl` (`PRIVATE_SCOPE_TTL_S`) by the registry.
 * `scope` is `public`, or `u-<SHA-256 of the caller's Authorization>` for a private list
 * (caller-scope.ts). The registry's memory cache uses the same keys. Pure over the {@link KvStore} port.
 */
import type { Config } from '../config'
import { dialectOf, type ProtocolVersion } from '../jsonrpc/versions'
import { isObject } from '../jsonrpc/jsonrpc'
import { putEntries, type KvStore } from '../ports'
import type { ToolRecord } from './tool-record'
import { EdgeError } from '../errors'
import { pinInstructionsKey, pinKey, pinServedKey } from '../pinning/pin-store'
export { pinInstructionsKey, pinKey, pinServedKey }

// ---------------------------------------------------------------- layout

/**
 * Longest tool name the edge stores or looks up, in UTF-16 units: a longer `tools/call` name is
 * unknown without a lookup, and the admin API refuses it. MCP 2025-11-25 says tool names SHOULD be
 * 1 to 128 characters; a SHOULD, so origins with longer names are served.
 */
export const MAX_TOOL_NAME = 256

/** Longest store key in UTF-8 bytes (Workers KV's rule, which every store of the edge applies: docs/stores.md). */
export const MAX_STORE_KEY_BYTES = 512

/** The key of one tool's record. */
export function toolKey(originId: string, scope: string, name: string): string {
  return `tools:${originId}:${scope}:${name}`
}

/** The prefix of every tool record of an origin in one scope, or in every scope when `scope` is omitted. */
export function toolPrefix(originId: string, scope?: string): string {
  return scope === undefined ? `tools:${originId}:` : `tools:${originId}:${scope}:`
}

/** The key of an origin's last full tool list in one scope (`{ names, hash, fetchedAt, ttlMs? }`). */
export function toolListKey(originId: string, scope: string): string {
  return `toollist:${originId}:${scope}`
}

/** The key of the names pushed through the admin API for an origin and scope (`{ names, hash }`). */
export function adminListKey(originId: string, scope: string): string {
  return `adminlist:${originId}:${scope}`
}

/**
 * The key of a private scope's marker, `scopes:<originId>:<scope>` -> `{ at }` (epoch ms of the
 * scope's last write), written with every write into the scope and expiring after twice
 * `PRIVATE_SCOPE_TTL_S`: the store-side index by which the oldest private scopes of an origin are
 * found and removed (private-scopes.ts).
 */
export function scopeMarkerKey(originId: string, scope: string): string {
  return `scopes:${originId}:${scope}`
}

/** The prefix of every private scope marker of an origin. */
export function scopeMarkerPrefix(originId: string): string {
  return `scopes:${originId}:`
}

/** Length of a string in UTF-8 bytes (lone surrogates count 3, as TextEncoder writes U+FFFD). */
export function utf8Length(s: string): number {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** True when `key` is within {@link MAX_STORE_KEY_BYTES} (a UTF-16 length of 170 or less always is). */
function keyFits(key: string): boolean {
  return key.length <= 170 || utf8Length(key) <= MAX_STORE_KEY_BYTES
}

/**
 * Why `name` cannot name a tool record of `originId` and `scope`, or null: it must be 1 to
 * {@link MAX_TOOL_NAME} characters, and its key `tools:<origin>:<scope>:<name>` at most
 * {@link MAX_STORE_KEY_BYTES} UTF-8 bytes (a name of 256 non-ASCII characters passes the first).
 */
export function toolNameProblem(name: string, originId: string, scope: string): string | null {
  if (name.length === 0 || name.length > MAX_TOOL_NAME) return `a tool name must be 1 to ${MAX_TOOL_NAME} characters long (this one has ${name.length})`
  const bytes = utf8Length(toolKey(originId, scope, name))
  if (bytes > MAX_STORE_KEY_BYTES) return `with its origin and scope, a tool name's store key must be at most ${MAX_STORE_KEY_BYTES} UTF-8 bytes (this one would be ${bytes})`
  return null
}

// ---------------------------------------------------------------- codec

/** 32-bit FNV-1a of a string, as 8 hex digits. */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(16).padStart(8, '0')
}

/**
 * The source tag of the records of `originId` (FNV-1a of the URL its name stands for), or undefined
 * when no origin is configured under it: a record learned from another URL under the same name is
 * not used (tool-registry.ts `ToolRegistryOptions.sourceOf`).
 */
export function sourceTag(config: Pick<Config, 'originUrl' | 'origins'>, originId: string): string | undefined {
  const url = originId === 'default' ? config.originUrl : config.origins[originId]?.url
  return url ? fnv1a(url) : undefined
}

/**
 * True for a value shaped like a {@link ToolRecord} (KV may hold anything an operator wrote): an
 * object with a string `name`, an `inputSchema`, and a `dialect` that is absent, null or one the
 * edge knows.
 */
export function isToolRecord(v: unknown): v is ToolRecord {
  if (!isObject(v) || typeof v.name !== 'string' || !('inputSchema' in v)) return false
  return v.dialect === undefined || v.dialect === null || v.dialect === 'draft-07' || v.dialect === '2019-09' || v.dialect === '2020-12'
}

/**
 * Decodes a stored value: the record, or null when there is none or it is not a {@link ToolRecord}
 * (not JSON, wrong shape). A record written by hand may leave the dialect out: it gets its
 * `$schema`'s, else 2020-12 (the MCP 2025-11-25 default). Never throws.
 */
export function decodeToolRecord(text: string | null): ToolRecord | null {
  if (!text) return null
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return null
  }
  if (!isToolRecord(v)) return null
  if (v.dialect === undefined) v.dialect = dialectOf(v.inputSchema, '2025-11-25')
  return v
}

/** The stored text of a record. */
export function encodeToolRecord(record: ToolRecord): string {
  return JSON.stringify(record)
}

/**
 * Builds the record of one `tools/list` entry (learned from the origin or pushed by an operator).
 * @param tool the entry; null when it is not an object with a non-empty string `name` and an `inputSchema`
 * @param era the protocol version of the list (decides the default dialect)
 * @param now epoch ms, the record's `fetchedAt`
 * @param source the origin's tag ({@link sourceTag}), if any
 * @param ttlMs the origin's freshness hint in ms; kept when a positive finite number
 */
export function toToolRecord(tool: unknown, era: ProtocolVersion, now: number, source?: string, ttlMs?: number): ToolRecord | null {
  if (!isObject(tool) || typeof tool.name !== 'string' || tool.name === '' || !('inputSchema' in tool)) return null
  const record: ToolRecord = {
    name: tool.name,
    inputSchema: tool.inputSchema,
    dialect: dialectOf(tool.inputSchema, era),
    hash: fnv1a(JSON.stringify(tool.inputSchema) ?? ''),
    fetchedAt: now,
  }
  if (source !== undefined) record.source = source
  if (tool.outputSchema !== undefined) {
    record.outputSchema = tool.outputSchema
    record.outputDialect = dialectOf(tool.outputSchema, era)
  }
  if (typeof ttlMs === 'number' && Number.isFinite(ttlMs) && ttlMs > 0) record.ttlMs = ttlMs
  return record
}

/** One tool as `schemas pull` writes it and `schemas push` / `PUT /admin/tools/<origin>` take it. */
export interface PortableTool {
  name: string
  inputSchema: unknown
  outputSchema?: unknown
}

/** A record as `schemas pull` writes it: name, inputSchema and outputSchema (if any). */
export function portable(record: ToolRecord): PortableTool {
  return { name: record.name, inputSchema: record.inputSchema, ...(record.outputSchema !== undefined ? { outputSchema: record.outputSchema } : {}) }
}

// ---------------------------------------------------------------- reads and writes

/** The store cannot list keys (a store without `list`): listing and pulling are not possible. */
export class StoreCannotListError extends EdgeError {
  override readonly name = 'StoreCannotListError'
  override readonly code = 'EDGE_ERR_STORE_CANNOT_LIST'
  constructor() {
    super('this store cannot list its keys')
  }
}

/**
 * Every key of `kv` under `prefix`, in the store's (UTF-8 byte) order, at most `max`.
 * @returns null when the store has no `list`
 * @throws the store's own errors as they are
 */
export async function listKeys(kv: KvStore, prefix: string, max = Number.POSITIVE_INFINITY): Promise<string[] | null> {
  if (typeof kv.list !== 'function') return null
  const out: string[] = []
  let cursor: string | undefined
  do {
    const page = await kv.list(cursor === undefined ? { prefix } : { prefix, cursor })
    for (const k of page.keys) out.push(k.name)
    cursor = page.list_complete ? undefined : page.cursor
  } while (cursor && out.length < max)
  return out.length > max ? out.slice(0, max) : out
}

/**
 * One tool's record, or null when the store holds none, an unreadable one, or the name's key is
 * longer than any store accepts (so it cannot be stored: no store call is made).
 * @throws the store's own errors as they are (an outage is not "no record")
 */
export async function getStoredTool(kv: KvStore, originId: string, name: string, scope = 'public'): Promise<ToolRecord | null> {
  const key = toolKey(originId, scope, name)
  return keyFits(key) ? decodeToolRecord(await kv.get(key)) : null
}

/**
 * Every tool record of `originId` in `scope` (default `public`), in key order; records that do not
 * decode are skipped.
 * @throws StoreCannotListError when the store has no `list`; the store's own errors as they are
 */
export async function listStoredTools(kv: KvStore, originId: string, scope = 'public'): Promise<ToolRecord[]> {
  const prefix = toolPrefix(originId, scope)
  const keys = await listKeys(kv, prefix)
  if (keys === null) throw new StoreCannotListError()
  const out: ToolRecord[] = []
  for (let i = 0; i < keys.length; i += 1000) {
    const records = await Promise.all(keys.slice(i, i + 1000).map(async (k) => decodeToolRecord(await kv.get(k))))
    for (const r of records) if (r) out.push(r)
  }
  return out
}

/**
 * The names of the tool records of `originId` in `scope`, at most `max`: the store's keys when it
 * can list them (`listedBy: 'store'`), else the names the last pull and the admin API's pushes
 * recorded, sorted (`listedBy: 'toollist'`).
 * @throws the store's own errors as they are
 */
export async function listStoredNames(kv: KvStore, originId: string, scope: string, max: number): Promise<{ names: string[]; listedBy: 'store' | 'toollist' }> {
  const prefix = toolPrefix(originId, scope)
  const keys = await listKeys(kv, prefix, max)
  if (keys) return { names: keys.map((k) => k.slice(prefix.length)), listedBy: 'store' }
  const names = [...new Set([...(await readNames(kv, toolListKey(originId, scope))), ...(await readNames(kv, adminListKey(originId, scope)))])].sort()
  return { names: names.slice(0, max), listedBy: 'toollist' }
}

/**
 * The names recorded under a name list key ({@link toolListKey} or {@link adminListKey}); [] when
 * there is none or it does not decode.
 * @throws the store's own errors as they are
 */
export async function readNames(kv: KvStore, key: string): Promise<string[]> {
  const v = parseOrNull(await kv.get(key))
  return isObject(v) && Array.isArray(v.names) ? v.names.filter((n): n is string => typeof n === 'string') : []
}

function parseOrNull(text: string | null): unknown {
  try {
    return text ? (JSON.parse(text) as unknown) : null
  } catch {
    return null
  }
}

/** The new value of the name list `key` with `names`, keeping its other members (`fetchedAt`, `ttlMs`). */
async function namesValue(kv: KvStore, key: string, names: string[]): Promise<string> {
  const v = parseOrNull(await kv.get(key))
  return JSON.stringify({ ...(isObject(v) ? v : {}), names, hash: fnv1a(names.join('\n')) })
}

/**
 * Writes one tool's record.
 * @param options `expirationTtl` in seconds (a private scope's keys)
 * @throws the store's own errors as they are
 */
export async function putStoredTool(kv: KvStore, originId: string, scope: string, record: ToolRecord, options?: { expirationTtl: number }): Promise<void> {
  await kv.put(toolKey(originId, scope, record.name), encodeToolRecord(record), options)
}

/**
 * Stores records pushed by an operator, and adds their names to the admin list
 * ({@link adminListKey}): one read first (a store that is down fails before anything is written),
 * then one write of the store ({@link putEntries}: one file write, one MULTI/EXEC; on Workers KV
 * one put each), the name list last.
 * @throws the store's own errors as they are; then the push is not, or not wholly, stored
 */
export async function putStoredTools(kv: KvStore, originId: string, scope: string, records: readonly ToolRecord[]): Promise<void> {
  const listKey = adminListKey(originId, scope)
  const names = await readNames(kv, listKey)
  const writes = records.map((r) => ({ key: toolKey(originId, scope, r.name), value: encodeToolRecord(r) }))
  writes.push({ key: listKey, value: await namesValue(kv, listKey, [...new Set([...names, ...records.map((r) => r.name)])]) })
  await putEntries(kv, writes)
}

/**
 * Deletes one tool's record, and its name from the pulled and the pushed name lists of its scope.
 * @returns false when there was no record (nothing is changed)
 * @throws the store's own errors as they are
 */
export async function deleteStoredTool(kv: KvStore, originId: string, name: string, scope = 'public'): Promise<boolean> {
  const key = toolKey(originId, scope, name)
  if (!keyFits(key) || (await kv.get(key)) === null) return false
  await kv.delete(key)
  for (const list of [toolListKey(originId, scope), adminListKey(originId, scope)]) {
    const names = await readNames(kv, list)
    if (names.includes(name))
      await kv.put(
        list,
        await namesValue(
          kv,
          list,
          names.filter((n) => n !== name)
        )
      )
  }
  return true
}

/**
 * Records a full pull's names under {@link toolListKey} and deletes the records of tools the
 * previous list named and this one does not (a removed tool is unknown again), except names an
 * operator pushed ({@link adminListKey}). Never rejects: a
 * store that is down is cleaned up by the next pull.
 * @param now epoch ms, the list's `fetchedAt`
 * @param ttlMs the origin's freshness hint, kept when positive
 * @param options `expirationTtl` in seconds (a private scope's list)
 */
export async function putPulledList(
  kv: KvStore,
  originId: string,
  scope: string,
  names: string[],
  now: number,
  ttlMs?: number,
  options?: { expirationTtl: number }
): Promise<void> {
  const listKey = toolListKey(originId, scope)
  try {
    const old = await readNames(kv, listKey)
    // A name an operator pushed is theirs: a pull that no longer lists it does not delete it.
    const gone = old.filter((n) => !names.includes(n))
    const pushed = gone.length ? new Set(await readNames(kv, adminListKey(originId, scope))) : new Set<string>()
    await Promise.all(gone.filter((n) => !pushed.has(n)).map((n) => kv.delete(toolKey(originId, scope, n))))
  } catch {
    // the store is down: the next pull cleans up
  }
  const value = { names, hash: fnv1a(names.join('\n')), fetchedAt: now, ...(typeof ttlMs === 'number' && ttlMs > 0 ? { ttlMs } : {}) }
  await kv.put(listKey, JSON.stringify(value), options).catch(() => undefined)
}

/**
 * The keys of one scope but its marker, for deleting the scope: its pulled list, every tool record,
 * its served snapshot (`pinserved:`) and a pin record of the scope an older edge may have written
 * (the pins are the origin's now: `pins:<origin>:public`, never deleted here).
 * @throws StoreCannotListError when the store has no `list`; the store's own errors as they are
 */
export async function scopeKeys(kv: KvStore, originId: string, scope: string): Promise<string[]> {
  const records = await listKeys(kv, toolPrefix(originId, scope))
  if (records === null) throw new StoreCannotListError()
  return [toolListKey(originId, scope), ...records, pinServedKey(originId, scope), ...(scope === 'public' ? [] : [pinKey(originId, scope)])]
}

/**
 * The private scopes of `originId` that have a marker, with the marker's expiry in epoch seconds
 * (infinity when it has none).
 * @throws StoreCannotListError when the store has no `list`; the store's own errors as they are
 */
export async function listScopeMarkers(kv: KvStore, originId: string): Promise<{ scope: string; expiration: number }[]> {
  if (typeof kv.list !== 'function') throw new StoreCannotListError()
  const prefix = scopeMarkerPrefix(originId)
  const out: { scope: string; expiration: number }[] = []
  let cursor: string | undefined
  do {
    const page = await kv.list({ prefix, ...(cursor ? { cursor } : {}) })
    for (const k of page.keys) out.push({ scope: k.name.slice(prefix.length), expiration: k.expiration ?? Number.POSITIVE_INFINITY })
    cursor = page.list_complete ? undefined : page.cursor
  } while (cursor)
  return out
}

/**
 * Writes the marker of a private scope after a write into it (`{ at: now }`, expiring after `ttlS`).
 * @throws the store's own errors as they are
 */
export async function putScopeMarker(kv: KvStore, originId: string, scope: string, now: number, ttlS: number): Promise<void> {
  await kv.put(scopeMarkerKey(originId, scope), JSON.stringify({ at: now }), { expirationTtl: ttlS })
}
