/**
 * @module core/pinning/tool-digest
 * The digest of a tool definition, the unit an operator approves (docs/pinning.md "Digest").
 *
 * - **Tool digest**: `sha256:` + 64 lowercase hex digits of SHA-256 over the UTF-8 bytes of the
 *   RFC 8785 (JSON Canonicalization Scheme, JCS) serialization of the whole `Tool` object as the
 *   origin served it in `tools/list`: every member (`name`, `title`, `description`, `inputSchema`,
 *   `outputSchema`, `annotations`, `icons`, `execution`, `_meta`) and any member this edge does not
 *   know, nothing left out. That is the input SEP-2636 digests and the `contentHash` form of SEP-3140
 *   (JCS + SHA-256), so the two can be compared once servers send one.
 * - **Field sub-digests**: the same form over the JCS of one top-level member's value, one per member
 *   present, to explain a change and class it (see {@link classifyChange}).
 *
 * The value digested is the parsed JSON (what the edge's JSON parser and every client's parser see):
 * member order and insignificant whitespace never matter, a duplicated member name counts with its
 * last value (as JSON.parse keeps it), numbers are IEEE 754 doubles written the RFC 8785 way
 * (ECMAScript Number-to-String: `1.0` -> `1`, `-0` -> `0`, `1e21` -> `1e+21`), strings are
 * written with JSON's minimal escapes and otherwise as their UTF-8 bytes (no Unicode normalization).
 *
 * **Definitions that have no JCS form.** RFC 8785 takes I-JSON (RFC 7493) input: a string holding a
 * lone surrogate (`"\ud800"`, legal JSON text, not Unicode text) and a number JSON.parse read as
 * +-Infinity (`1e400`) cannot be serialized. Such a tool gets **no digest** ({@link ToolDigestResult}
 * `ok: false`, with the reason and a JSON Pointer to an offending place), never a digest of
 * some repaired copy: replacing a lone surrogate with U+FFFD would give two different definitions
 * one digest. A tool without a digest can never be approved (there is nothing to approve by exact
 * digest); pin-state.ts keeps it `pending` (or `changed`) until the origin serves a definition that
 * has one. Invalid UTF-8 bytes never get here: the response decoder has already replaced them with
 * U+FFFD, and the digest covers that decoded text.
 *
 * Hashing is Web Crypto's `crypto.subtle.digest('SHA-256')`, global on Node >= 20 and Workers;
 * JCS is the `canonicalize` package (RFC 8785 reference implementation by the RFC's authors; pure
 * ESM, no dependencies), pinned to 4.0.0, the release whose `engines` admits Node 20 (5.x asks for
 * 22; the output is the same, byte for byte). It recurses: a definition nested past the stack
 * (thousands of levels, only reachable with MAX_JSON_DEPTH raised that far) gets no digest, and so
 * is never approvable, rather than a wrong one. Pure; never throws.
 */
import canonicalize from 'canonicalize'
import { displayPointer, pathOf, type PathLink } from './display-text'

/** A digest in this edge's form: `sha256:` followed by 64 lowercase hex digits. */
export type ToolDigest = `sha256:${string}`

/** Matches exactly a {@link ToolDigest}. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/

/** Whether `value` is a well-formed {@link ToolDigest} (not whether any tool has it). */
export function isToolDigest(value: unknown): value is ToolDigest {
  return typeof value === 'string' && DIGEST_PATTERN.test(value)
}

/** Why a value has no RFC 8785 serialization, and where (a display-safe JSON Pointer, RFC 6901). */
export interface JcsProblem {
  /**
   * - `lone-surrogate`: a string or member name holds an unpaired UTF-16 surrogate (not I-JSON);
   * - `non-finite-number`: a number is NaN or +-Infinity (JSON text `1e400` parses to Infinity);
   * - `not-an-object`: a tool definition that is not a JSON object at all;
   * - `not-json`: any other value JSON has no form for (only reachable from non-parsed input).
   */
  reason: 'lone-surrogate' | 'non-finite-number' | 'not-an-object' | 'not-json'
  /** Where, as a JSON Pointer from the tool (`""` is the tool itself), bounded and escaped for display. */
  pointer: string
}

/** The RFC 8785 text of a value, or why it has none. */
export type Canonical = { ok: true; text: string } | { ok: false; problem: JcsProblem }

/**
 * The RFC 8785 (JCS) serialization of a JSON value.
 * @param value a parsed JSON value (object, array, string, finite number, boolean, null)
 * @returns `{ ok: true, text }`, or `{ ok: false, problem }` naming a place with a lone
 *   surrogate or a non-finite number ({@link JcsProblem}); never throws
 */
export function canonicalJson(value: unknown): Canonical {
  let text: string | undefined
  try {
    text = canonicalize(value)
  } catch {
    return { ok: false, problem: locateProblem(value) }
  }
  return text === undefined ? { ok: false, problem: { reason: 'not-json', pointer: '' } } : { ok: true, text }
}

/** An unpaired UTF-16 surrogate (the tsconfig lib predates `String.prototype.isWellFormed`). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** The first place in `value` that has no JCS form (walked only after canonicalize refused it). */
function locateProblem(value: unknown): JcsProblem {
  const stack: { v: unknown; path: PathLink | null }[] = [{ v: value, path: null }]
  const at = (path: PathLink | null) => displayPointer(pathOf(path))
  while (stack.length > 0) {
    const { v, path } = stack.pop()!
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return { reason: 'lone-surrogate', pointer: at(path) }
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { reason: 'non-finite-number', pointer: at(path) }
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: { key: i, parent: path } })
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v).sort()
      // A lone surrogate in a member name is that member's problem; members are walked in JCS order.
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ v: (v as Record<string, unknown>)[keys[i]!], path: { key: keys[i]!, parent: path } })
      const bad = keys.find((k) => LONE_SURROGATE.test(k))
      if (bad !== undefined) return { reason: 'lone-surrogate', pointer: at({ key: bad, parent: path }) }
    } else if (v !== null && typeof v !== 'boolean') {
      return { reason: 'not-json', pointer: at(path) }
    }
  }
  return { reason: 'not-json', pointer: '' }
}

const encoder = new TextEncoder()

/**
 * `sha256:` + lowercase hex of SHA-256 over the UTF-8 bytes of `text` (Web Crypto).
 * @param text any string; callers pass JCS text (a lone surrogate would be encoded as U+FFFD by
 *   TextEncoder, which is why {@link canonicalJson} refuses them before this is reached)
 */
export async function sha256Digest(text: string): Promise<ToolDigest> {
  const d = await crypto.subtle.digest('SHA-256', encoder.encode(text))
  let hex = ''
  for (const b of new Uint8Array(d)) hex += b.toString(16).padStart(2, '0')
  return `sha256:${hex}`
}

/** The digest of a whole tool with its JCS text, or why it has none. */
export type ToolDigestResult = { ok: true; digest: ToolDigest; jcs: string } | { ok: false; problem: JcsProblem }

/**
 * Remembers the digests of recently seen JCS texts, so a `tools/list` that serves the same
 * definitions again costs their canonicalization but no hashing: Web Crypto's digest costs about
 * 30-50 us of CPU per call on Node 20 (measured on the shared 2-core machine; it runs off-thread,
 * with a promise round trip), against about 10 us to canonicalize a small tool. Bounded by entries
 * and by the total length of the texts kept (oldest dropped first); memory only.
 */
export class DigestMemo {
  private readonly map = new Map<string, ToolDigest>()
  private chars = 0
  /**
   * @param maxEntries texts kept at most
   * @param maxChars total UTF-16 code units of the texts kept at most (a text longer than this is never kept)
   */
  constructor(
    readonly maxEntries = 1000,
    readonly maxChars = 4 * 1024 * 1024
  ) {}
  /** The digest of `text`, from memory or hashed now (and then kept). */
  async digest(text: string): Promise<ToolDigest> {
    const known = this.map.get(text)
    if (known !== undefined) {
      this.map.delete(text)
      this.map.set(text, known)
      return known
    }
    const d = await sha256Digest(text)
    if (text.length <= this.maxChars && !this.map.has(text)) {
      this.map.set(text, d)
      this.chars += text.length
      while (this.map.size > this.maxEntries || this.chars > this.maxChars) {
        const oldest = this.map.keys().next().value as string
        this.map.delete(oldest)
        this.chars -= oldest.length
      }
    }
    return d
  }
  /** How many texts are kept. */
  get size(): number {
    return this.map.size
  }

  /**
   * Digests of tool entries already seen, by the entry's `JSON.stringify` text ({@link entryKey}).
   * Lists that differ in one tool (an origin that writes the request id into a description) are new
   * parses, so {@link perList} cannot share them; this skips the canonicalization and hashing of
   * every entry they share. The promise is kept at once, so lists decided side by side share the
   * work still under way. Bounded like the texts (entries and characters, oldest dropped first).
   */
  private readonly entries = new Map<string, Promise<ToolDigestResult>>()
  /** Field sub-digests ({@link fieldDigests}) of tool entries already seen, by the same key. */
  private readonly fieldsByEntry = new Map<string, Promise<FieldDigests>>()
  private readonly keyChars = new Map<Map<string, unknown>, number>()
  /** Entries canonicalized and digested through {@link entry} (a miss of the per-entry memory). */
  entriesDigested = 0

  /**
   * The key of a tool entry, or undefined when it cannot stand for the value. For parsed JSON,
   * `JSON.stringify` writes member names in order, strings with lone surrogates escaped (`\ud800`,
   * not U+FFFD) and numbers the way JCS does (`-0` as `0` in both), so two entries with one key have
   * one JCS text (and equal members), except that it writes `NaN` and +-Infinity as `null`: a key
   * holding `null` anywhere is not used (a definition with `1e400` must never borrow the digest of one
   * with `null`), nor one longer than `maxChars`.
   */
  private entryKey(tool: object): string | undefined {
    let key: string
    try {
      key = JSON.stringify(tool)
    } catch {
      return undefined // nested past the stack: canonicalize refuses it too
    }
    return key.includes('null') || key.length > this.maxChars ? undefined : key
  }

  /** The value kept under `key` in `map`, or `make()` kept there now (bounded, oldest dropped first). */
  private keep<V>(map: Map<string, Promise<V>>, key: string | undefined, make: () => Promise<V>): Promise<V> {
    if (key === undefined) return make()
    const known = map.get(key)
    if (known !== undefined) {
      map.delete(key)
      map.set(key, known)
      return known
    }
    const p = make()
    map.set(key, p)
    // A failed computation (Web Crypto refusing) is not remembered.
    p.catch(() => map.get(key) === p && map.delete(key))
    let chars = (this.keyChars.get(map) ?? 0) + key.length
    while (map.size > this.maxEntries || chars > this.maxChars) {
      const oldest = map.keys().next().value as string
      map.delete(oldest)
      chars -= oldest.length
    }
    this.keyChars.set(map, chars)
    return p
  }

  /**
   * The digest of one tool entry ({@link toolDigest}), from the per-entry memory when an equal entry was seen.
   * @param tool one element of a parsed `tools` array (an object; {@link toolDigest} refuses others before this)
   */
  entry(tool: object): Promise<ToolDigestResult> {
    return this.keep(this.entries, this.entryKey(tool), async () => {
      this.entriesDigested++
      const c = canonicalJson(tool)
      return c.ok ? { ok: true, digest: await this.digest(c.text), jcs: c.text } : c
    })
  }

  /**
   * The field sub-digests of one tool entry ({@link fieldDigests}), from the per-entry memory when
   * an equal entry was seen: a batch of lists that each set a baseline hashes each member once.
   */
  fields(tool: unknown): Promise<FieldDigests> {
    const key = typeof tool === 'object' && tool !== null && !Array.isArray(tool) ? this.entryKey(tool) : undefined
    return this.keep(this.fieldsByEntry, key, () => fieldDigests(tool))
  }

  /**
   * Lists already digested, by the array the reply's parse gave: the responses of one reply that
   * carry the same list text share one parse (grading/reply-grader.ts), so a batch of 100
   * `tools/list` canonicalizes its tools once, not 100 times. Held only while the array is.
   */
  private readonly lists = new WeakMap<readonly unknown[], Promise<unknown>>()
  /** Lists digested through {@link perList} (each call that was not answered from memory counts once). */
  listsDigested = 0

  /**
   * The digests of a whole list, computed once per list array.
   * @param tools the `tools` array of a parsed `tools/list` result (the key: the same array, not an equal one)
   * @param digestAll computes the digests (pin-state.ts `servedTools`); its promise is shared
   */
  perList<T>(tools: readonly unknown[], digestAll: () => Promise<T>): Promise<T> {
    const held = this.lists.get(tools)
    if (held) return held as Promise<T>
    this.listsDigested++
    const p = digestAll()
    this.lists.set(tools, p)
    return p
  }
}

/**
 * The tool digest (module comment): SHA-256 over the JCS of the whole `Tool` object as served.
 * @param tool one element of a `tools/list` result's `tools` array, as parsed
 * @param memo where digests of entries and texts already seen are remembered ({@link DigestMemo}); none by default
 * @returns `{ ok: true, digest, jcs }` (`jcs` is the exact text hashed), or `{ ok: false, problem }`
 *   when the definition is not an object or has no JCS form: such a tool can never be approved
 */
export async function toolDigest(tool: unknown, memo?: DigestMemo): Promise<ToolDigestResult> {
  if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return { ok: false, problem: { reason: 'not-an-object', pointer: '' } }
  if (memo) return memo.entry(tool)
  const c = canonicalJson(tool)
  if (!c.ok) return c
  return { ok: true, digest: await sha256Digest(c.text), jcs: c.text }
}

/**
 * Sub-digests of a tool: member name -> {@link ToolDigest} of the JCS of that member's value, for
 * each top-level member present (known or not); `null` for a member whose value has no JCS form.
 * Kept in a Map: member names come from the origin (`__proto__` is a name like any other).
 */
export type FieldDigests = ReadonlyMap<string, ToolDigest | null>

/**
 * The field sub-digests of a tool definition (see {@link FieldDigests}). A member whose value is
 * `undefined` (never the case for parsed JSON) is left out, as JCS leaves it out of the tool digest.
 * @param tool a tool definition (an object; anything else has no members and gives an empty map)
 */
export async function fieldDigests(tool: unknown): Promise<FieldDigests> {
  const out = new Map<string, ToolDigest | null>()
  if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) return out
  const entries = Object.entries(tool).filter(([, v]) => v !== undefined)
  const digests = await Promise.all(
    entries.map(async ([, v]) => {
      const c = canonicalJson(v)
      return c.ok ? sha256Digest(c.text) : null
    })
  )
  entries.forEach(([k], i) => out.set(k, digests[i]!))
  return out
}

/** The `Tool` members of MCP 2025-11-25 (and 2026-07-28); any other member is digested too and classed material. */
export const KNOWN_TOOL_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'icons', 'execution', '_meta'] as const

/**
 * Members whose change is cosmetic (SEP-3140: presentation only; a policy may approve such changes
 * in bulk, `approve --all-cosmetic`). Everything else is material: `name`, `description`,
 * `inputSchema` (a widened schema is an exfiltration channel), `outputSchema` and parameter names
 * (CyberArk full-schema poisoning), `annotations` (hints a client acts on), `execution`, `_meta`, and
 * any member this edge does not know (its meaning cannot be judged, so it is not waved through).
 */
export const COSMETIC_FIELDS: ReadonlySet<string> = new Set(['title', 'icons'])

/** How a change to one member counts: `cosmetic` for {@link COSMETIC_FIELDS}, `material` for any other member. */
export function fieldClass(field: string): 'material' | 'cosmetic' {
  return COSMETIC_FIELDS.has(field) ? 'cosmetic' : 'material'
}

/** One member that differs between an approved and a served definition. */
export interface FieldChange {
  /** The top-level member name, as the origin wrote it (display it with display-text.ts). */
  field: string
  /** `added`: served only; `removed`: approved only; `modified`: both, different sub-digests (or one has none). */
  change: 'added' | 'removed' | 'modified'
  class: 'material' | 'cosmetic'
  /** The approved sub-digest; absent for `added`, null when the approved value had no JCS form. */
  approved?: ToolDigest | null
  /** The served sub-digest; absent for `removed`, null when the served value has no JCS form. */
  served?: ToolDigest | null
}

/** What changed between two definitions of a tool, member by member. */
export interface ToolChange {
  /** `none`: same sub-digests; `cosmetic`: only cosmetic members changed; `material`: at least one material member changed. */
  class: 'none' | 'cosmetic' | 'material'
  /** Every member that differs, ordered by member name (UTF-16 code units, the JCS order). */
  fields: FieldChange[]
}

/**
 * Classifies the change from an approved definition to a served one by their field sub-digests
 * ({@link fieldDigests}). A member present on one side only is added or removed; a member whose
 * sub-digest is null (no JCS form) on either side always counts as modified, never as equal.
 * @returns `class: 'none'` with no fields when every member has the same sub-digest
 */
export function classifyChange(approved: FieldDigests, served: FieldDigests): ToolChange {
  const names = [...new Set([...approved.keys(), ...served.keys()])].sort()
  const fields: FieldChange[] = []
  for (const field of names) {
    const a = approved.get(field)
    const s = served.get(field)
    const inA = approved.has(field)
    const inS = served.has(field)
    if (inA && inS && a !== null && a === s) continue
    const c: FieldChange = { field, change: !inA ? 'added' : !inS ? 'removed' : 'modified', class: fieldClass(field) }
    if (inA) c.approved = a ?? null
    if (inS) c.served = s ?? null
    fields.push(c)
  }
  const cls = fields.length === 0 ? 'none' : fields.some((f) => f.class === 'material') ? 'material' : 'cosmetic'
  return { class: cls, fields }
}
