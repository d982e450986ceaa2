/**
 * @module core/validation/stored-tools
 * The tool records of one origin as they are in the store (keys `tools:<origin>:<scope>:<name>`,
 * records {@link ToolRecord}; docs/design.md §7): listed, read and deleted for the admin API
 * (`GET`/`DELETE /admin/tools/<origin>[/<tool>]`) and for `mcp-edge schemas` run directly against
 * a store. Writing goes through {@link ToolRegistry.learn}, so a push builds the same record as a
 * tool list learned from the origin. Pure over the {@link KvStore} port.
 */
import type { KvStore } from '../ports'
import type { ToolRecord } from './tool-record'
import { EdgeError } from '../errors'

/** One tool as `schemas pull` writes it and `schemas push` / `PUT /admin/tools/<origin>` take it. */
export interface PortableTool {
  name: string
  inputSchema: unknown
  outputSchema?: unknown
}

/** A store that can list its keys (Workers KV's `list`; optional on the port). */
type ListingStore = KvStore & {
  list?(options: { prefix?: string; limit?: number; cursor?: string }): Promise<{ keys: { name: string }[]; list_complete: boolean; cursor?: string }>
}

/** The store cannot list keys (a store without `list`): listing and pulling are not possible. */
export class StoreCannotListError extends EdgeError {
  override readonly name = 'StoreCannotListError'
  override readonly code = 'EDGE_ERR_STORE_CANNOT_LIST'
  constructor() {
    super('this store cannot list its keys')
  }
}

/** The key of one tool's record. */
export function toolKey(originId: string, scope: string, name: string): string {
  return `tools:${originId}:${scope}:${name}`
}

function parseRecord(text: string | null): ToolRecord | null {
  if (text === null) return null
  try {
    const v = JSON.parse(text) as ToolRecord
    return v && typeof v === 'object' && typeof v.name === 'string' ? v : null
  } catch {
    return null
  }
}

/**
 * Every tool record of `originId` in `scope` (default `public`), in key order; records that do not
 * parse are skipped.
 * @throws StoreCannotListError when the store has no `list`; the store's own errors as they are
 */
export async function listStoredTools(kv: KvStore, originId: string, scope = 'public'): Promise<ToolRecord[]> {
  const store = kv as ListingStore
  if (typeof store.list !== 'function') throw new StoreCannotListError()
  const prefix = toolKey(originId, scope, '')
  const out: ToolRecord[] = []
  let cursor: string | undefined
  do {
    const page = await store.list({ prefix, ...(cursor ? { cursor } : {}) })
    const records = await Promise.all(page.keys.map(async (k) => parseRecord(await kv.get(k.name))))
    for (const r of records) if (r) out.push(r)
    cursor = page.list_complete ? undefined : page.cursor
  } while (cursor)
  return out
}

/** One tool's record, or null when the store holds none (or an unreadable one). */
export async function getStoredTool(kv: KvStore, originId: string, name: string, scope = 'public'): Promise<ToolRecord | null> {
  return parseRecord(await kv.get(toolKey(originId, scope, name)))
}

/**
 * Deletes one tool's record.
 * @returns false when there was none
 */
export async function deleteStoredTool(kv: KvStore, originId: string, name: string, scope = 'public'): Promise<boolean> {
  const key = toolKey(originId, scope, name)
  if ((await kv.get(key)) === null) return false
  await kv.delete(key)
  return true
}

/** A record as `schemas pull` writes it: name, inputSchema and outputSchema (if any). */
export function portable(record: ToolRecord): PortableTool {
  return { name: record.name, inputSchema: record.inputSchema, ...(record.outputSchema !== undefined ? { outputSchema: record.outputSchema } : {}) }
}
