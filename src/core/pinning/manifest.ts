/**
 * @module core/pinning/manifest
 * The pin manifest: every pin of one (origin, scope) as one JSON document, exported for review in
 * version control and imported as a baseline (docs/pinning.md "Manifest"). Version 1:
 *
 * ```json
 * {
 *   "version": 1,
 *   "origin": "default",
 *   "scope": "public",
 *   "pins": [{ "name": "get_forecast", "digest": "sha256:…", "approvedAt": "2026-12-01T21:15:32.000Z", "fields": { "name": "sha256:…", "inputSchema": "sha256:…" } }],
 *   "catalogDigest": "sha256:…"
 * }
 * ```
 *
 * - `pins` sorted by name (UTF-16 code units), one per name; `fields` holds the field sub-digests
 *   (tool-digest.ts) of the approved definition, one per top-level member, and must include `name`;
 * - `catalogDigest` is the catalog digest (pin-state.ts) of the pins: a reviewer can check that
 *   the `_meta["io.mcp-edge/catalogDigest"]` clients are shown is the manifest they reviewed.
 *
 * {@link parseManifest} is strict: every member required, no unknown member, no duplicated member
 * name anywhere in the text (JSON.parse would silently keep the last one, so a reviewer could read
 * one digest while the edge imports another), every digest well formed, `fields.name` the digest of
 * the pin's name, `catalogDigest` the digest of the pins. Errors name the JSON Pointer (RFC 6901)
 * and show at most a bounded, escaped excerpt of the value. Pure; never throws.
 */
import { displayPointer, displayText } from './display-text'
import { canonicalJson, isToolDigest, sha256Digest, type FieldDigests, type ToolDigest } from './tool-digest'
import { catalogDigest, type ApprovedPin } from './pin-state'
import { isCallerScope } from '../config-rules'

/** The manifest version this edge writes and reads. */
export const MANIFEST_VERSION = 1
/** Upper bound of `pins` entries in one manifest. */
export const MAX_MANIFEST_PINS = 10_000
/** Upper bound of a manifest's text, in UTF-16 code units (16 Mi). */
export const MAX_MANIFEST_CHARS = 16 * 1024 * 1024
/** Upper bound of a tool name, origin id or field name in a manifest, in UTF-16 code units. */
export const MAX_MANIFEST_NAME = 256
/** Errors reported per manifest at most (the first ones found, in document order). */
export const MAX_MANIFEST_ERRORS = 50

/** One pin in a manifest. */
export interface ManifestPin {
  name: string
  digest: ToolDigest
  /** RFC 3339 (e.g. `2026-12-01T21:15:32.000Z`), as the exporting edge recorded it. */
  approvedAt: string
  /** Top-level member name -> sub-digest of its value; includes `name`. */
  fields: Record<string, ToolDigest>
}

/** A version 1 manifest (module comment). */
export interface PinManifest {
  version: 1
  /** The origin id (the path name an origin is served under, e.g. `default`). */
  origin: string
  /** `public`, or a caller scope `u-<64 hex>` (core/validation caller scopes). */
  scope: string
  pins: ManifestPin[]
  catalogDigest: ToolDigest
}

/** One problem with a manifest. */
export interface ManifestError {
  /** JSON Pointer (RFC 6901) of the offending member, display-safe; `""` for the document. */
  path: string
  message: string
}

/** The result of {@link parseManifest}. */
export type ManifestParse = { ok: true; manifest: PinManifest } | { ok: false; errors: ManifestError[] }

/** A pin as the pin store keeps it for export: its approval and its field sub-digests. */
export interface ExportablePin {
  digest: ToolDigest
  approvedAt: string
  fields: FieldDigests
}

/**
 * Builds the manifest of one (origin, scope).
 * @param pins tool name -> pin with its field sub-digests (a member whose sub-digest is null is
 *   left out: an approved definition always has a JCS form, so only a corrupt store has one)
 * @returns the manifest, pins sorted by name, `fields` sorted by member name; null when a name
 *   has no JCS form (see pin-state.ts `catalogText`)
 */
export async function buildManifest(origin: string, scope: string, pins: ReadonlyMap<string, ExportablePin>): Promise<PinManifest | null> {
  const cat = await catalogDigest(pins)
  if (cat === null) return null
  const list: ManifestPin[] = [...pins.keys()].sort().map((name) => {
    const p = pins.get(name)!
    const fields = Object.fromEntries(
      [...p.fields.keys()]
        .sort()
        .filter((k) => p.fields.get(k) !== null)
        .map((k) => [k, p.fields.get(k)!])
    ) as Record<string, ToolDigest>
    return { name, digest: p.digest, approvedAt: p.approvedAt, fields }
  })
  return { version: MANIFEST_VERSION, origin, scope, pins: list, catalogDigest: cat }
}

/** The manifest as the text written to a file: two-space indented JSON, members in the order of {@link PinManifest}, a final newline. */
export function manifestText(m: PinManifest): string {
  return JSON.stringify(m, null, 2) + '\n'
}

/**
 * The pins a parsed manifest imports: source `manifest`, `approvedAt` the import time (this edge
 * approves them now; the manifest's own `approvedAt` is the exporting edge's record).
 * @param now RFC 3339 UTC time of the import
 */
export function manifestPins(m: PinManifest, now: string): Map<string, ApprovedPin> {
  return new Map(m.pins.map((p) => [p.name, { digest: p.digest, approvedAt: now, source: 'manifest' as const }]))
}

const RFC3339 = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d{1,9})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** A value as an error message shows it: JSON text, bounded and escaped (display-text.ts). */
function shown(v: unknown): string {
  if (typeof v === 'string') return `"${displayText(v, 40)}"`
  if (Array.isArray(v)) return 'an array'
  if (v === null) return 'null'
  if (typeof v === 'object') return 'an object'
  return displayText(String(v), 40)
}

/**
 * The first member name that occurs twice in one object of a JSON text, with where; null when
 * none does. `text` must already be valid JSON (JSON.parse accepted it): only string tokens and
 * structure are read. Linear, iterative.
 */
export function duplicateMember(text: string): { path: string; name: string } | null {
  type Frame = { obj: true; keys: Set<string>; expectKey: boolean; key?: string } | { obj: false; index: number }
  const stack: Frame[] = []
  const pathHere = (): (string | number)[] => stack.map((f) => (f.obj ? (f.key ?? '') : f.index))
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      const top = stack[stack.length - 1]
      if (top?.obj && top.expectKey) {
        const key = JSON.parse(text.slice(i, j + 1)) as string
        if (top.keys.has(key)) {
          top.key = key
          return { path: displayPointer(pathHere()), name: key }
        }
        top.keys.add(key)
        top.key = key
        top.expectKey = false
      }
      i = j + 1
      continue
    }
    if (c === '{') stack.push({ obj: true, keys: new Set(), expectKey: true })
    else if (c === '[') stack.push({ obj: false, index: 0 })
    else if (c === '}' || c === ']') stack.pop()
    else if (c === ',') {
      const top = stack[stack.length - 1]
      if (top?.obj) top.expectKey = true
      else if (top) top.index++
    }
    i++
  }
  return null
}

/**
 * Parses and checks a manifest (module comment for the rules).
 * @param input the manifest's text (at most {@link MAX_MANIFEST_CHARS}), or an already parsed value
 *   (then duplicate member names cannot be seen and are not checked)
 * @returns the manifest, or every error found (at most {@link MAX_MANIFEST_ERRORS}), each naming
 *   the JSON Pointer of the member and what is wrong; never throws
 */
export async function parseManifest(input: string | unknown): Promise<ManifestParse> {
  let doc: unknown = input
  if (typeof input === 'string') {
    if (input.length > MAX_MANIFEST_CHARS) return fail('', `the manifest is ${input.length} characters long; at most ${MAX_MANIFEST_CHARS} are read`)
    try {
      doc = JSON.parse(input)
    } catch {
      return fail('', 'the manifest is not JSON text (RFC 8259)')
    }
    const dup = duplicateMember(input)
    if (dup) return fail(dup.path, `member name ${shown(dup.name)} occurs more than once in the same object; each member must be written once`)
  }
  const errors: ManifestError[] = []
  const err = (path: (string | number)[], message: string): void => {
    if (errors.length < MAX_MANIFEST_ERRORS) errors.push({ path: displayPointer(path), message })
  }
  if (!isRecord(doc)) return fail('', `a manifest is a JSON object, got ${shown(doc)}`)
  exactMembers(doc, ['version', 'origin', 'scope', 'pins', 'catalogDigest'], [], err)
  if ('version' in doc && doc.version !== MANIFEST_VERSION) err(['version'], `must be ${MANIFEST_VERSION} (the manifest version this edge reads), got ${shown(doc.version)}`)
  if ('origin' in doc) checkName(doc.origin, ['origin'], 'an origin id', err)
  if ('scope' in doc && (typeof doc.scope !== 'string' || !isCallerScope(doc.scope)))
    err(['scope'], `must be "public" or a caller scope "u-" followed by 64 lowercase hex digits, got ${shown(doc.scope)}`)
  if ('catalogDigest' in doc && !isToolDigest(doc.catalogDigest)) err(['catalogDigest'], `must be "sha256:" followed by 64 lowercase hex digits, got ${shown(doc.catalogDigest)}`)
  const names = new Set<string>()
  const nameChecks: Promise<void>[] = []
  if ('pins' in doc) {
    if (!Array.isArray(doc.pins)) err(['pins'], `must be an array of pins, got ${shown(doc.pins)}`)
    else if (doc.pins.length > MAX_MANIFEST_PINS) err(['pins'], `holds ${doc.pins.length} pins; at most ${MAX_MANIFEST_PINS} are read`)
    else
      doc.pins.forEach((p, i) => {
        const at = ['pins', i]
        if (!isRecord(p)) return err(at, `a pin is an object, got ${shown(p)}`)
        exactMembers(p, ['name', 'digest', 'approvedAt', 'fields'], at, err)
        const nameOk = 'name' in p && checkName(p.name, [...at, 'name'], 'a tool name', err)
        if (nameOk) {
          const name = p.name as string
          if (names.has(name)) err([...at, 'name'], `tool ${shown(name)} has more than one pin; each name is pinned once`)
          names.add(name)
        }
        if ('digest' in p && !isToolDigest(p.digest)) err([...at, 'digest'], `must be "sha256:" followed by 64 lowercase hex digits, got ${shown(p.digest)}`)
        if ('approvedAt' in p && (typeof p.approvedAt !== 'string' || !RFC3339.test(p.approvedAt) || !Number.isFinite(Date.parse(p.approvedAt))))
          err([...at, 'approvedAt'], `must be an RFC 3339 date-time such as "2026-12-01T21:15:32.000Z", got ${shown(p.approvedAt)}`)
        if (!('fields' in p)) return
        if (!isRecord(p.fields)) return err([...at, 'fields'], `must be an object of field sub-digests, got ${shown(p.fields)}`)
        for (const [k, v] of Object.entries(p.fields)) {
          if (k.length === 0 || k.length > MAX_MANIFEST_NAME || LONE_SURROGATE.test(k))
            err([...at, 'fields', k], `a field name is 1 to ${MAX_MANIFEST_NAME} characters of Unicode text`)
          if (!isToolDigest(v)) err([...at, 'fields', k], `must be "sha256:" followed by 64 lowercase hex digits, got ${shown(v)}`)
        }
        if (!Object.hasOwn(p.fields, 'name')) err([...at, 'fields'], 'must hold the sub-digest of "name" (every tool has a name)')
        else if (nameOk && isToolDigest(p.fields.name)) {
          const claimed = p.fields.name
          nameChecks.push(
            nameDigest(p.name as string).then((d) => {
              if (d !== claimed) err([...at, 'fields', 'name'], `is not the sub-digest of this pin's name (the name's sub-digest is ${d})`)
            })
          )
        }
      })
  }
  await Promise.all(nameChecks)
  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) }
  const m = doc as unknown as PinManifest
  const expected = await catalogDigest(new Map(m.pins.map((p) => [p.name, { digest: p.digest }])))
  if (expected !== m.catalogDigest) return fail('/catalogDigest', `does not match the pins: their catalog digest is ${expected}`)
  return { ok: true, manifest: m }
}

function fail(path: string, message: string): ManifestParse {
  return { ok: false, errors: [{ path, message }] }
}

/** Errors in document order (the async name checks finish out of order). */
function sortErrors(errors: ManifestError[]): ManifestError[] {
  const index = (p: string): number[] => p.split('/').map((s) => (/^\d+$/.test(s) ? Number(s) : -1))
  return errors
    .map((e, i) => ({ e, i, k: index(e.path) }))
    .sort((a, b) => {
      for (let j = 0; j < Math.min(a.k.length, b.k.length); j++) if (a.k[j]! !== b.k[j]!) return a.k[j]! - b.k[j]!
      return a.i - b.i
    })
    .map((x) => x.e)
}

/** Required members present, no other member (named by its pointer). */
function exactMembers(obj: Record<string, unknown>, required: string[], at: (string | number)[], err: (path: (string | number)[], message: string) => void): void {
  for (const k of required) if (!Object.hasOwn(obj, k)) err(at, `the member "${k}" is required`)
  for (const k of Object.keys(obj))
    if (!required.includes(k)) err([...at, k], `unknown member; a version 1 ${at.length === 0 ? 'manifest' : 'pin'} has only ${required.join(', ')}`)
}

/** A name: 1 to {@link MAX_MANIFEST_NAME} characters of Unicode text (no lone surrogate; an origin id also no control character). */
function checkName(v: unknown, at: (string | number)[], what: string, err: (path: (string | number)[], message: string) => void): boolean {
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_MANIFEST_NAME || LONE_SURROGATE.test(v) || (what !== 'a tool name' && CONTROL.test(v))) {
    err(at, `must be ${what}: 1 to ${MAX_MANIFEST_NAME} characters of Unicode text, got ${shown(v)}`)
    return false
  }
  return true
}

/** The sub-digest of a `name` member: the digest of the JCS of the name string. */
async function nameDigest(name: string): Promise<ToolDigest> {
  const c = canonicalJson(name)
  return sha256Digest(c.ok ? c.text : '')
}
