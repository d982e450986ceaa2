/**
 * @module validators/cfworker
 * The Workers engine: @cfworker/json-schema, which interprets schemas without generating code
 * (`new Function` is forbidden in workerd at request time). The dialect is passed explicitly
 * because the library ignores `$schema`.
 *
 * Own code around the library, and why:
 * - Formats: the library's format registry is a module-level object with its own checks, which
 *   disagree with ajv-formats on some inputs. {@link installSharedFormats} replaces its entries
 *   with the table shared with the ajv engine (./formats), so both runtimes agree by construction.
 *   Validation is synchronous, so the table in force (assert or annotate) is switched around each
 *   call without affecting any other call. The registry belongs to the module, so any other user
 *   of the library in the same isolate (none in the edge's Worker) sees the shared table too.
 * - `$ref`: the library resolves references lazily and throws mid-validation on a missing one;
 *   the engine checks every `$ref` of the schema at compile time so such a schema is unusable at
 *   once (D8), as it is with ajv.
 * - The library writes non-enumerable bookkeeping onto the schema objects it is given, so it gets
 *   a private deep copy (core/schema-normal-form), never the stored record.
 * - Bounded cost: validation runs through a vendored copy of the library's `validate`
 *   (./cfworker-validate) whose `pattern`/`patternProperties` use the linear-time engine shared
 *   with ajv (re2js) and whose `uniqueItems` is linear; a pattern that engine cannot run makes the
 *   schema unusable at compile time, as with ajv.
 */
import { dereference, format as cfFormats, type OutputUnit, type Schema, type ValidationResult } from '@cfworker/json-schema'
import { validate as boundedValidate } from './cfworker-validate'
import { schemaPatternProblem } from '../core/patterns/linear-pattern'
import type { Dialect } from '../core/jsonrpc/versions'
import { fragmentToPointer, normaliseIssues } from '../core/validation/issue-normal-form'
import { SchemaUnusableError, type CompiledValidator, type ValidationIssue, type ValidatorEngine } from '../core/ports'
import type { EngineOptions } from './ajv'
import { STRING_FORMATS, type FormatCheck } from './formats'
import { normaliseSchema } from '../core/validation/schema-normal-form'

const DRAFT: Record<Dialect, '7' | '2019-09' | '2020-12'> = { 'draft-07': '7', '2019-09': '2019-09', '2020-12': '2020-12' }

/** The format table in force during a validation: the shared one (assert) or none (annotate). */
let activeFormats: ReadonlyMap<string, FormatCheck> | null = STRING_FORMATS
let installed = false

/** Points every entry of the library's format registry at the shared table (idempotent). */
function installSharedFormats(): void {
  if (installed) return
  installed = true
  const registry = cfFormats as unknown as Record<string, (s: string) => boolean>
  for (const name of new Set([...Object.keys(registry), ...STRING_FORMATS.keys()])) {
    registry[name] = (s: string) => {
      const check = activeFormats?.get(name)
      return check ? check(s) : true
    }
  }
}

/**
 * Member names in cfworker's error texts are written between quotes without escaping; each text
 * has a fixed ending, so a greedy capture anchored at both ends recovers a name that holds quotes.
 */
const REQUIRED_TEXT = /^Instance does not have required property "(.*)"\.$/s
const MEMBER_TEXT = /^Property "(.*)" does not match (?:additional|unevaluated) properties schema\.$/s
const DEPENDENT_TEXT = /does not have "(.*)"\.$/s

function toIssue(u: OutputUnit): ValidationIssue {
  const issue: ValidationIssue = { path: fragmentToPointer(u.instanceLocation), keyword: u.keyword, schemaPath: fragmentToPointer(u.keywordLocation) }
  if (u.keyword === 'required') {
    // cfworker: 'Instance does not have required property "x".' (a schema name, not a value)
    const m = REQUIRED_TEXT.exec(u.error)
    if (m) issue.property = m[1]
  }
  if (u.keyword === 'additionalProperties' || u.keyword === 'unevaluatedProperties') {
    const m = MEMBER_TEXT.exec(u.error)
    if (m) {
      issue.property = m[1]
      // Should cfworker report the member's location, the issue names the parent plus the member.
      const suffix = '/' + m[1]!.replace(/~/g, '~0').replace(/\//g, '~1')
      if (issue.path.endsWith(suffix)) issue.path = issue.path.slice(0, -suffix.length)
    }
  }
  if (u.keyword === 'dependentRequired' || u.keyword === 'dependencies') {
    // 'Instance has "a" but does not have "b".' names two schema-declared members, no value.
    const m = DEPENDENT_TEXT.exec(u.error)
    if (m) issue.property = m[1]
    issue.schemaPath = issue.schemaPath.replace(/\/dependantRequired$/, '/dependentRequired')
  }
  // Inside `propertyNames` cfworker locates an issue at the member whose *name* failed: that name
  // is the rejected value, so the issue is placed at the object, as ajv does.
  if (/\/propertyNames(\/|$)/.test(issue.schemaPath) && issue.keyword !== 'propertyNames') issue.path = issue.path.slice(0, Math.max(0, issue.path.lastIndexOf('/')))
  // cfworker's "False boolean schema." under another keyword: ajv calls it "false schema".
  if (issue.keyword === 'false') issue.keyword = 'false schema'
  return issue
}

/** Keys whose values are data, not subschemas (never walked for `$ref`). */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples'])

/** True when some `$ref` in the (dereferenced) schema points to nothing the validator knows. */
function hasUnresolvedRef(node: unknown, lookup: Record<string, unknown>, depth = 0): boolean {
  if (depth > 256 || typeof node !== 'object' || node === null) return false
  if (Array.isArray(node)) return node.some((n) => hasUnresolvedRef(n, lookup, depth + 1))
  const abs = (node as { __absolute_ref__?: string }).__absolute_ref__
  if (typeof abs === 'string' && lookup[abs] === undefined) return true
  for (const [k, v] of Object.entries(node)) {
    if (DATA_KEYS.has(k)) continue
    if (hasUnresolvedRef(v, lookup, depth + 1)) return true
  }
  return false
}

/** The library's `Validator`, validating through the bounded copy of `validate` (./cfworker-validate). */
class Validator {
  readonly lookup: Record<string, unknown>
  constructor(
    private readonly schema: Schema,
    private readonly draft: '7' | '2019-09' | '2020-12'
  ) {
    this.lookup = dereference(schema)
  }
  validate(instance: unknown): ValidationResult {
    return (boundedValidate as (...a: unknown[]) => ValidationResult)(instance, this.schema, this.draft, this.lookup, false)
  }
  addSchema(schema: Schema, id: string): void {
    dereference({ ...schema, $id: id }, this.lookup as never)
  }
}

/**
 * Creates the cfworker engine.
 * @param options see {@link EngineOptions}: `formats` (assert by default) and the test-only `remotes`
 */
export function createCfworkerEngine(options: EngineOptions = {}): ValidatorEngine {
  installSharedFormats()
  const formats = options.formats === 'annotate' ? null : STRING_FORMATS
  const remotes = Object.entries(options.remotes ?? {})
  return {
    name: 'cfworker',
    compile(schema: unknown, dialect: Dialect): CompiledValidator {
      if (typeof schema !== 'object' && typeof schema !== 'boolean') throw new SchemaUnusableError('its inputSchema is not a JSON Schema object')
      let v: Validator
      let copy: unknown
      try {
        copy = normaliseSchema(schema, dialect)
        v = new Validator(copy as Schema, DRAFT[dialect])
        for (const [uri, remote] of remotes) v.addSchema(structuredClone(remote) as Schema, uri)
      } catch {
        // e.g. two subschemas claiming one URI, or an `$id` that is not a URI reference
        throw new SchemaUnusableError('its inputSchema is not a valid JSON Schema')
      }
      const pattern = schemaPatternProblem(copy)
      if (pattern !== null) throw new SchemaUnusableError(`its inputSchema has ${pattern}`)
      if (hasUnresolvedRef(copy, v.lookup)) {
        throw new SchemaUnusableError('its inputSchema has a $ref the edge cannot resolve (remote references are never fetched)')
      }
      return (value: unknown) => {
        const previous = activeFormats
        activeFormats = formats
        try {
          const r = v.validate(value)
          return r.valid ? null : normaliseIssues(r.errors.map(toIssue))
        } finally {
          activeFormats = previous
        }
      }
    },
  }
}
