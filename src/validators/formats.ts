/**
 * @module validators/formats
 * One table of JSON Schema `format` checks shared by both engines, so a string gets the same
 * verdict on Node (ajv) and on Workers (cfworker).
 *
 * The checks are ajv-formats' "full" formats (a well-kept library; plain regular expressions and
 * functions, no code generation, so they run in workerd too). ajv gets them from this table
 * (validators/ajv.ts `addFormat`); the cfworker engine gets the very same functions installed into its format registry
 * (see {@link installCfworkerFormats}), because @cfworker/json-schema's own format checks differ
 * from ajv-formats' on several inputs (e.g. `uuid` with a `urn:uuid:` prefix, `time` without a
 * time zone, `duration` edge cases): one shared table is the only way to agree by construction.
 *
 * Only string formats are used: ajv-formats' numeric formats (`int32`, `float`, ...) apply to
 * numbers in ajv but cfworker checks `format` on strings only, so they are left out of both, and
 * unknown formats are ignored by both (JSON Schema: unknown formats are annotations).
 */
// ajv-formats is a development dependency only: the package build (scripts/build-package.mjs)
// bundles this one module of it (no dependencies of its own) into dist/lib/vendor, so an install
// of the library brings neither ajv-formats nor the ajv it depends on.
import { fullFormats } from 'ajv-formats/dist/formats.js'

/** A string format check: true when `s` is a valid instance of the format. */
export type FormatCheck = (s: string) => boolean

function toCheck(def: unknown): FormatCheck | null {
  if (def instanceof RegExp) return (s) => def.test(s)
  if (typeof def === 'function') return def as FormatCheck
  if (typeof def === 'object' && def !== null) {
    const d = def as { type?: string; validate?: unknown }
    if (d.type !== undefined && d.type !== 'string') return null
    if (d.validate instanceof RegExp) {
      const r = d.validate
      return (s) => r.test(s)
    }
    if (typeof d.validate === 'function') return d.validate as FormatCheck
  }
  return null // `true` (password, binary): no check
}

/** The shared string formats, by name (date, time, date-time, duration, email, uri, uuid, ...). */
export const STRING_FORMATS: ReadonlyMap<string, FormatCheck> = new Map(
  Object.entries(fullFormats as Record<string, unknown>)
    .map(([name, def]) => [name, toCheck(def)] as const)
    .filter((e): e is readonly [string, FormatCheck] => e[1] !== null)
)

/** Names of {@link STRING_FORMATS}, for `addFormats(ajv, names)`. */
export const STRING_FORMAT_NAMES: string[] = [...STRING_FORMATS.keys()]
