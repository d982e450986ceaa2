/**
 * @module core/validation/tool-record
 * The shapes of a tool's schemas: {@link ToolRecord} as stored in the KV namespace, and
 * {@link ResolvedTool} as the registry hands it to the stages (the record with its compiled
 * validators). Types only, so the registry, its caches (compiled-validators, freshness) and the
 * stages that read a tool (tools-call, output-schema, exchange) share them without importing each other.
 */
import type { Dialect } from '../jsonrpc/versions'
import type { CompiledValidator } from '../ports'
import type { ValidationCost } from './schema-portability'
import type { CallCostPlan } from './call-cost'

/** One tool's schemas as stored in KV. `dialect` is null when `$schema` names an unsupported one. */
export interface ToolRecord {
  name: string
  inputSchema: unknown
  outputSchema?: unknown
  dialect: Dialect | null
  /** Dialect of `outputSchema` (its `$schema`, else the era rule); null when unsupported. */
  outputDialect?: Dialect | null
  /** FNV-1a of the input schema text, hex (a label for logs and the admin API; the compile cache keys on the full text). */
  hash: string
  /** Epoch milliseconds; absent in a record pushed by hand (never stale). */
  fetchedAt?: number
  /** The tag of the origin it was learned from (`ToolRegistryOptions.sourceOf` in ./tool-registry.ts). */
  source?: string
  /** The origin's freshness hint in ms (2026-07-28 `ttlMs`), when given. */
  ttlMs?: number
}

/** A tool ready to validate with: its record and its compiled input validator (or why not). */
export interface ResolvedTool {
  record: ToolRecord
  validate: CompiledValidator | null
  /** Set when `validate` is null: a safe reason (no schema text). */
  unusable?: string
  /** The input schema in the normal form the engines compiled (issue locations point into it). */
  messageSchema?: unknown
  /** What one validation with `validate` can cost (schema-portability.ts `validationCost`), for the per-call budget. */
  cost?: ValidationCost
  /** The schema's call-time cost plan (call-cost.ts `callCostPlan`): a call past the static figure is weighed by what its arguments hold. */
  costPlan?: CallCostPlan | null
  /** Same for the output schema. */
  outputMessageSchema?: unknown
  /** The compiled `outputSchema` validator; null when the tool declares none or it is unusable. */
  outputValidate?: CompiledValidator | null
  /** Set when the tool declares an `outputSchema` the edge cannot use: a safe reason. */
  outputUnusable?: string
  /** When a rejection by this entry was last rechecked against the origin (epoch ms; `ToolRegistry.needsRecheck`). */
  recheckedAt?: number
  /** True when the record is past its freshness (TTL or list_changed); the caller refreshes. */
  stale?: boolean
  /**
   * The JSON bodies that answered invalid arguments for this tool, per form and issue list
   * (validation/tools-call.ts `rejectionBody`; bounded there). Built from the schema and the issue
   * list only, never from the rejected values.
   */
  rejections?: Map<string, string>
}
