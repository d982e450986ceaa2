/**
 * @module validators/ajv
 * The Node engine: ajv, compiled (code generation, so never used on Workers). One ajv instance
 * per dialect (draft-07, 2019-09, 2020-12) with ajv-formats' string formats, added from the table
 * shared with the Workers engine (./formats: the same functions, so ajv needs no ajv-formats
 * package of its own); `allErrors` so a caller learns every problem at once;
 * remote `$ref`s are never fetched (no `loadSchema`): such a schema is unusable.
 *
 * Memory: ajv keeps every compiled schema in an internal cache keyed by the schema object, and
 * registers nested `$id`s on the instance. The edge holds compiled validators in its own LRU
 * (tool-registry), so after each compile this engine removes what ajv kept: when the LRU drops a
 * validator, nothing else references it and it is garbage collected. This also keeps two tools
 * whose schemas share an `$id` from colliding inside one ajv instance.
 *
 * Bounded cost: `pattern`/`patternProperties` match with the linear-time engine (ajv's
 * `code.regExp`), and `uniqueItems` is replaced by a linear check (one canonical key per item);
 * ajv's own compares every pair (5,000 objects: 3.7-4.5 s).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { Dialect } from '../core/jsonrpc/versions'
import { fragmentToPointer, normaliseIssues } from '../core/validation/issue-normal-form'
import { SchemaUnusableError, type CompiledValidator, type ValidationIssue, type ValidatorEngine } from '../core/ports'
import { STRING_FORMATS } from './formats'
import { normaliseSchema } from '../core/validation/schema-normal-form'
import { isMultipleOf } from './numbers'
import { compilePattern, schemaPatternProblem } from '../core/patterns/linear-pattern'
import { firstDuplicate } from '../core/patterns/unique-items'

/**
 * ajv's regular-expression engine for `pattern` and `patternProperties`: the linear-time engine
 * shared with the Workers engine (core/patterns/linear-pattern, re2js), so both give one
 * verdict and no caller's string can make matching backtrack. `code` names it for ajv's
 * standalone code output, which the edge does not use.
 */
const linearRegExp = Object.assign(
  (pattern: string) => {
    const re = compilePattern(pattern)
    // ajv keys its per-schema pattern table by `toString()`: one key per pattern text.
    return { test: (s: string) => re.test(s), toString: () => `/${pattern}/re2` }
  },
  { code: 'linearRegExp' }
)

/** Options of both engine factories. */
export interface EngineOptions {
  /**
   * `assert` (default, production): `format` is checked with the shared table. `annotate`: `format`
   * is an annotation only (the JSON Schema 2019-09+ default; used to run the suite's required tests).
   */
  formats?: 'assert' | 'annotate'
  /**
   * Test only: schemas made resolvable by URI (the JSON-Schema-Test-Suite `remotes` folder, loaded
   * from disk by the test). Production passes nothing: the edge never fetches a remote `$ref`.
   */
  remotes?: Record<string, unknown>
}

function toIssue(e: ErrorObject): ValidationIssue {
  // ajv's instancePath is a plain JSON Pointer; its schemaPath is a URI fragment (segments
  // percent-encoded, e.g. a patternProperties regex): decoded so both engines report the same.
  const schemaPath = fragmentToPointer(e.schemaPath)
  const issue: ValidationIssue = { path: e.instancePath, keyword: e.keyword, schemaPath }
  const p = e.params as { missingProperty?: string; additionalProperty?: string; unevaluatedProperty?: string; limit?: number }
  const prop = p.missingProperty ?? p.additionalProperty ?? p.unevaluatedProperty
  if (prop !== undefined) issue.property = prop
  // ajv's "must NOT have more than n items" for a closed tuple (2020-12 `items: false`) is the
  // same rule as draft-07's additionalItems; one name for both engines (see core/issues).
  if (e.keyword === 'items' && typeof p.limit === 'number') issue.keyword = 'additionalItems'
  return issue
}

/**
 * True when some string of a schema (a member name or a value, at any depth; past 256 levels,
 * assumed) is a member every plain object inherits: `constructor`, `toString`, `__proto__`...
 *
 * Only such a schema is compiled with ajv's `ownProperties`. ajv reads a property as
 * `data.name !== undefined`; for arguments from JSON.parse (own data members over
 * Object.prototype) that is exact unless `name` is inherited, where `required: ["constructor"]`
 * would pass without the member and `properties: {toString: ...}` would check the inherited
 * function. `ownProperties` adds a `hasOwnProperty` call per property read and an `Object.keys`
 * per object: without it this engine validates the 100-property benchmark arguments in 42 us
 * instead of 80 (one core), and that cost bought nothing for names no schema of the corpus uses.
 * (Without it, a member a fault elsewhere in the process added to Object.prototype would be
 * seen as an argument; such a fault breaks far more than validation.)
 */
function namesInherited(node: unknown, depth = 0): boolean {
  if (typeof node === 'string') return node in Object.prototype
  if (typeof node !== 'object' || node === null) return false
  if (depth > 256) return true
  if (Array.isArray(node)) return node.some((n) => namesInherited(n, depth + 1))
  for (const [k, v] of Object.entries(node)) if (k in Object.prototype || namesInherited(v, depth + 1)) return true
  return false
}

/**
 * Creates the ajv engine (one instance per dialect, created lazily on first use). `messages:
 * false`: the issues are built from each error's keyword, paths and params (core/validation/
 * error-message), so ajv's own message strings were built per error and thrown away (invalid
 * 10-property benchmark arguments: about 2.2 against 2.9 us).
 * `retained()` counts what the ajv instances still hold (cached schemas + registered refs), so a
 * test can prove that compiling many schemas leaves nothing behind.
 */
export function createAjvEngine(options: EngineOptions = {}): ValidatorEngine & { retained(): number } {
  // Per dialect, and with or without `ownProperties` (see namesInherited).
  const instances = new Map<string, Ajv>()
  const get = (d: Dialect, ownProperties: boolean): Ajv => {
    const key = `${d}:${ownProperties}`
    let a = instances.get(key)
    if (!a) {
      const opts = {
        allErrors: true,
        messages: false,
        strict: false,
        logger: false,
        ownProperties,
        validateFormats: options.formats !== 'annotate',
        code: { regExp: linearRegExp },
      } as const
      a = d === '2020-12' ? new Ajv2020(opts) : d === '2019-09' ? new Ajv2019(opts) : new Ajv(opts)
      for (const [name, check] of STRING_FORMATS) a.addFormat(name, { type: 'string', validate: check })
      // Exact decimal multipleOf, shared with the Workers engine (see ./numbers).
      a.removeKeyword('multipleOf')
      a.addKeyword({ keyword: 'multipleOf', type: 'number', schemaType: 'number', errors: false, validate: (divisor: number, data: number) => isMultipleOf(data, divisor) })
      // uniqueItems in linear time, the same check as the Workers engine's (see the module comment).
      a.removeKeyword('uniqueItems')
      a.addKeyword({
        keyword: 'uniqueItems',
        type: 'array',
        schemaType: 'boolean',
        errors: false,
        validate: (unique: boolean, data: unknown[]) => !unique || firstDuplicate(data) === null,
      })
      for (const [uri, schema] of Object.entries(options.remotes ?? {})) {
        try {
          a.addSchema(schema as object, uri)
        } catch {
          // a remote written for another dialect: not resolvable in this one
        }
      }
      instances.set(key, a)
    }
    return a
  }
  return {
    name: 'ajv',
    compile(schema: unknown, dialect: Dialect): CompiledValidator {
      const copy = normaliseSchema(schema, dialect)
      const ajv = get(dialect, namesInherited(copy))
      const pattern = schemaPatternProblem(copy)
      if (pattern !== null) throw new SchemaUnusableError(`its inputSchema has ${pattern}`)
      const refsBefore = new Set(Object.keys((ajv as unknown as { refs: object }).refs))
      let fn: ValidateFunction
      try {
        fn = ajv.compile(copy as object)
      } catch (e) {
        const missingRef = e instanceof Error && /can't resolve reference|MissingRef/i.test(e.message + e.constructor.name)
        throw new SchemaUnusableError(
          missingRef ? 'its inputSchema has a $ref the edge cannot resolve (remote references are never fetched)' : 'its inputSchema is not a valid JSON Schema'
        )
      } finally {
        // Drop what ajv retained for this schema (see the module comment). ajv registers the root
        // under its `$id` (or "") while compiling, which is how `$ref: "#"` resolves; it is removed here.
        try {
          ajv.removeSchema(copy as object)
        } catch {
          // nothing was cached
        }
        const refs = (ajv as unknown as { refs: Record<string, unknown> }).refs
        for (const k of Object.keys(refs)) if (!refsBefore.has(k)) delete refs[k]
      }
      return (value: unknown) => (fn(value) ? null : normaliseIssues((fn.errors ?? []).map(toIssue)))
    },
    retained(): number {
      let n = 0
      for (const a of instances.values()) {
        const inner = a as unknown as { _cache: Map<unknown, unknown>; refs: object }
        n += inner._cache.size + Object.keys(inner.refs).length
      }
      return n
    },
  }
}
