/**
 * @module tool-registry
 * Tool schemas per origin: a KV namespace behind a per-isolate memory cache, plus a bounded cache
 * of compiled validators keyed by dialect and schema text (DESIGN.md section 7).
 *
 * KV layout (one namespace, all values JSON text):
 * - `tools:<originId>:<scope>:<toolName>` -> {@link ToolRecord}
 * - `toollist:<originId>:<scope>` -> `{ names, hash, fetchedAt, ttlMs? }`
 * `scope` is `public`, or `u-<hash of the caller's Authorization>` for private tool lists.
 *
 * Reads: KV at most once per tool per TTL per isolate (memory entries expire after the TTL).
 * Compiles: at most once per (dialect, schema text) per isolate while the LRU holds it.
 * Refresh (D7): single-flight per origin+scope and rate-limited by `refreshMinIntervalMs`.
 */
import { dialectOf, type Dialect, type ProtocolVersion } from './era'
import { isObject } from './jsonrpc'
import { SchemaUnusableError, type CompiledValidator, type KvStore, type ValidatorEngine } from './ports'

/** One tool's schemas as stored in KV. `dialect` is null when `$schema` names an unsupported one. */
export interface ToolRecord {
  name: string
  inputSchema: unknown
  outputSchema?: unknown
  dialect: Dialect | null
  /** FNV-1a of the input schema text, hex. */
  hash: string
  /** Epoch milliseconds. */
  fetchedAt: number
  /** The origin's freshness hint in ms (2026-07-28 `ttlMs`), when given. */
  ttlMs?: number
}

/** A tool ready to validate with: its record and its compiled input validator (or why not). */
export interface ResolvedTool {
  record: ToolRecord
  validate: CompiledValidator | null
  /** Set when `validate` is null: a safe reason (no schema text). */
  unusable?: string
  outputValidate?: CompiledValidator | null
}

/** 32-bit FNV-1a of a string, as 8 hex digits. */
export function fnv1a(text: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0).toString(16).padStart(8, '0')
}

/** Options of {@link ToolRegistry}. Units: seconds and milliseconds as named. */
export interface ToolRegistryOptions {
  kv: KvStore
  engine: ValidatorEngine
  schemaTtlS: number
  validatorCacheSize: number
  refreshMinIntervalMs: number
  now?: () => number
}

interface MemoryEntry {
  tool: ResolvedTool | null
  expiresAt: number
}

/** Fetches an origin's whole tool list (all pages) with the edge's own client session. */
export type ToolListPuller = () => Promise<{ tools: unknown[]; era: ProtocolVersion; ttlMs?: number }>

/** Holds and refreshes tool schemas; see the module comment for the KV layout. */
export class ToolRegistry {
  private readonly memory = new Map<string, MemoryEntry>()
  private readonly compiled = new Map<string, CompiledValidator | SchemaUnusableError>()
  private readonly inflight = new Map<string, Promise<boolean>>()
  private readonly lastRefresh = new Map<string, { at: number; ok: boolean }>()
  private readonly now: () => number
  /** Counters for tests and metrics: KV reads, compiles, refreshes started. */
  readonly stats = { kvReads: 0, compiles: 0, refreshes: 0 }

  constructor(private readonly opts: ToolRegistryOptions) {
    this.now = opts.now ?? Date.now
  }

  /** The engine's name (`ajv` or `cfworker`). */
  get engineName(): string {
    return this.opts.engine.name
  }

  private ttlMs(record?: ToolRecord | null): number {
    return record?.ttlMs ?? this.opts.schemaTtlS * 1000
  }

  /**
   * Looks a tool up: memory, then KV. Returns null when the origin's store has no such tool.
   * A KV failure counts as "not known" (the caller fails open, D8/D16).
   */
  async lookup(originId: string, scope: string, name: string): Promise<ResolvedTool | null> {
    const key = `tools:${originId}:${scope}:${name}`
    const hit = this.memory.get(key)
    const now = this.now()
    if (hit && hit.expiresAt > now) {
      // LRU: move to the back (the entry holds compiled validators, so it is bounded too).
      this.memory.delete(key)
      this.memory.set(key, hit)
      return hit.tool
    }
    let record: ToolRecord | null = null
    try {
      this.stats.kvReads++
      const text = await this.opts.kv.get(key)
      if (text) record = JSON.parse(text) as ToolRecord
    } catch {
      record = null
    }
    const tool = record ? this.resolve(record) : null
    this.remember(key, { tool, expiresAt: now + this.ttlMs(record) })
    return tool
  }

  /**
   * Stores a memory entry, evicting the least recently used beyond `validatorCacheSize`: each
   * entry references its compiled validators, so an unbounded map would keep every validator
   * alive whatever the LRU of compiled validators holds (found by `npm run bench`).
   */
  private remember(key: string, entry: MemoryEntry): void {
    this.memory.delete(key)
    this.memory.set(key, entry)
    while (this.memory.size > this.opts.validatorCacheSize) this.memory.delete(this.memory.keys().next().value as string)
  }

  /** Compiles (or takes from the LRU) the validators of a record. Never throws. */
  resolve(record: ToolRecord): ResolvedTool {
    const out: ResolvedTool = { record, validate: null }
    if (!record.dialect) {
      out.unusable = 'its inputSchema declares a JSON Schema dialect the edge does not support'
      return out
    }
    const v = this.compile(record.inputSchema, record.dialect)
    if (v instanceof SchemaUnusableError) out.unusable = v.reason
    else out.validate = v
    if (record.outputSchema !== undefined) {
      const o = this.compile(record.outputSchema, dialectOf(record.outputSchema, '2025-11-25') ?? record.dialect)
      out.outputValidate = o instanceof SchemaUnusableError ? null : o
    }
    return out
  }

  private compile(schema: unknown, dialect: Dialect): CompiledValidator | SchemaUnusableError {
    const cacheKey = dialect + '\n' + JSON.stringify(schema)
    const hit = this.compiled.get(cacheKey)
    if (hit) {
      // LRU: move to the back.
      this.compiled.delete(cacheKey)
      this.compiled.set(cacheKey, hit)
      return hit
    }
    let result: CompiledValidator | SchemaUnusableError
    try {
      this.stats.compiles++
      if (!isObject(schema) && typeof schema !== 'boolean') throw new SchemaUnusableError('its inputSchema is not a JSON Schema object')
      result = this.opts.engine.compile(schema, dialect)
    } catch (e) {
      result = e instanceof SchemaUnusableError ? e : new SchemaUnusableError('its inputSchema could not be compiled')
    }
    this.compiled.set(cacheKey, result)
    while (this.compiled.size > this.opts.validatorCacheSize) {
      const oldest = this.compiled.keys().next().value as string
      this.compiled.delete(oldest)
    }
    return result
  }

  /** Number of compiled validators held (bounded by `validatorCacheSize`). */
  get compiledCount(): number {
    return this.compiled.size
  }

  /**
   * Stores the tools of one `tools/list` result page (learned in passing or pulled).
   * @param tools the `result.tools` array; malformed entries are skipped
   * @param era the protocol version the list was fetched in (decides the default dialect)
   * @param ttlMs the origin's freshness hint, if any
   * @returns the names stored
   */
  async learn(originId: string, scope: string, tools: unknown[], era: ProtocolVersion, ttlMs?: number): Promise<string[]> {
    const now = this.now()
    const names: string[] = []
    const writes: Promise<void>[] = []
    for (const t of tools) {
      if (!isObject(t) || typeof t.name !== 'string' || !('inputSchema' in t)) continue
      const record: ToolRecord = {
        name: t.name,
        inputSchema: t.inputSchema,
        dialect: dialectOf(t.inputSchema, era),
        hash: fnv1a(JSON.stringify(t.inputSchema)),
        fetchedAt: now,
      }
      if (t.outputSchema !== undefined) record.outputSchema = t.outputSchema
      if (ttlMs !== undefined) record.ttlMs = ttlMs
      names.push(t.name)
      const key = `tools:${originId}:${scope}:${t.name}`
      this.remember(key, { tool: this.resolve(record), expiresAt: now + this.ttlMs(record) })
      writes.push(this.opts.kv.put(key, JSON.stringify(record)).catch(() => undefined))
    }
    await Promise.all(writes)
    return names
  }

  /** Records a full pull's name list under `toollist:<originId>:<scope>`. */
  private async storeList(originId: string, scope: string, names: string[], ttlMs?: number): Promise<void> {
    const value = { names, hash: fnv1a(names.join('\n')), fetchedAt: this.now(), ...(ttlMs !== undefined ? { ttlMs } : {}) }
    await this.opts.kv.put(`toollist:${originId}:${scope}`, JSON.stringify(value)).catch(() => undefined)
  }

  /** Drops the memory entries of one origin+scope (e.g. on `notifications/tools/list_changed`). */
  invalidate(originId: string, scope: string): void {
    const prefix = `tools:${originId}:${scope}:`
    for (const key of this.memory.keys()) if (key.startsWith(prefix)) this.memory.delete(key)
    this.lastRefresh.delete(`${originId}:${scope}`)
  }

  /**
   * Refreshes an origin's tool list once (D7): concurrent callers share one pull; a pull is not
   * repeated within `refreshMinIntervalMs`. Resolves true when a pull succeeded (now or recently),
   * false when the pull failed or was rate-limited away (D16: callers fail open).
   */
  refresh(originId: string, scope: string, pull: ToolListPuller): Promise<boolean> {
    const k = `${originId}:${scope}`
    const running = this.inflight.get(k)
    if (running) return running
    const last = this.lastRefresh.get(k)
    if (last !== undefined && this.now() - last.at < this.opts.refreshMinIntervalMs) return Promise.resolve(last.ok)
    this.stats.refreshes++
    const p = (async () => {
      try {
        const { tools, era, ttlMs } = await pull()
        // Forget every cached entry of this origin first, so negative entries do not outlive the pull.
        this.invalidate(originId, scope)
        const names = await this.learn(originId, scope, tools, era, ttlMs)
        await this.storeList(originId, scope, names, ttlMs)
        this.lastRefresh.set(k, { at: this.now(), ok: true })
        return true
      } catch {
        this.lastRefresh.set(k, { at: this.now(), ok: false })
        return false
      } finally {
        this.inflight.delete(k)
      }
    })()
    this.inflight.set(k, p)
    return p
  }
}
