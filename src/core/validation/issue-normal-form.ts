/**
 * @module core/validation/issue-normal-form
 * One normal form for the issues of every engine, so a caller gets the same message on Node
 * (ajv) and Workers (cfworker): wrapper keywords that only say "a child failed" are dropped when
 * the child's own issue is present, and the branches of `anyOf`/`oneOf`/`not`/`if` collapse into
 * the combinator's issue. Pure.
 */
import type { ValidationIssue } from '../ports'

/** Keywords that fail only because a sub-schema failed. */
const WRAPPERS = new Set([
  'properties',
  'patternProperties',
  'items',
  'prefixItems',
  'allOf',
  '$ref',
  '$dynamicRef',
  '$recursiveRef',
  'dependentSchemas',
  'unevaluatedItems',
  'then',
  'else',
  'if',
  'propertyNames',
])
/** Keywords whose sub-schema attempts are not the caller's problem: only the keyword is reported. */
const COMBINATORS = new Set(['anyOf', 'oneOf', 'not', 'contains'])

/**
 * Normalises engine issues: wrappers removed when a deeper issue explains them, branch issues
 * under a failed combinator removed, a forbidden member reported once, duplicates removed.
 * (The order is fixed later, by error-message.ts, against the schema.)
 */
export function normaliseIssues(input: ValidationIssue[]): ValidationIssue[] {
  // Items past a closed tuple: one `additionalItems` issue at the array (ajv reports it so;
  // cfworker reports a "false schema" issue per extra item).
  const issues: ValidationIssue[] = []
  for (const i of input) {
    const m = i.keyword === 'false schema' ? /^(.*)\/\d+$/.exec(i.path) : null
    issues.push(m ? { path: m[1]!, keyword: 'additionalItems', schemaPath: i.schemaPath.replace(/\/\d+$/, '') } : i)
  }
  // Linear in the issues: each issue's schemaPath prefixes are looked up in a Set (a scan of every
  // combinator per issue took 1.4 s for the 8,191 issues of an anyOf nested 12 levels).
  const combinatorPaths = new Set(issues.filter((i) => COMBINATORS.has(i.keyword)).map((i) => i.schemaPath))
  const underCombinator = (schemaPath: string): boolean => {
    if (combinatorPaths.size === 0) return false
    for (let k = schemaPath.indexOf('/'); k !== -1; k = schemaPath.indexOf('/', k + 1)) if (combinatorPaths.has(schemaPath.slice(0, k))) return true
    return false
  }
  // A forbidden member is reported once: engines may add a "false schema" issue at the member
  // itself next to the parent's additionalProperties/unevaluatedProperties issue naming it.
  const forbidden = new Set(
    issues
      .filter((i) => (i.keyword === 'additionalProperties' || i.keyword === 'unevaluatedProperties') && i.property !== undefined)
      .map((i) => `${i.path}/${i.property!.replace(/~/g, '~0').replace(/\//g, '~1')}`)
  )
  const leaves = issues.filter((i) => !WRAPPERS.has(i.keyword) && !underCombinator(i.schemaPath) && !(i.keyword === 'false schema' && forbidden.has(i.path)))
  const kept = leaves.length ? leaves : issues.slice(0, 1)
  const seen = new Set<string>()
  const out: ValidationIssue[] = []
  for (const i of kept) {
    const k = `${i.path}\u0000${i.keyword}\u0000${i.property ?? ''}`
    if (seen.has(k)) continue
    seen.add(k)
    out.push(i)
  }
  return out
}

/**
 * A URI-fragment JSON Pointer (`#/a%20b/c`, as ajv's schemaPath and cfworker's locations are
 * written) -> the plain JSON Pointer `/a b/c`, so both engines report the same locations.
 * Segments that are not valid percent-encoding are kept as they are.
 */
export function fragmentToPointer(loc: string): string {
  // Nothing percent-encoded (the usual case, on every rejected call): only the `#` goes.
  if (!loc.includes('%')) return loc.charCodeAt(0) === 0x23 ? loc.slice(1) : loc
  return loc
    .replace(/^#/, '')
    .split('/')
    .map((seg) => {
      try {
        return decodeURIComponent(seg)
      } catch {
        return seg
      }
    })
    .join('/')
}
