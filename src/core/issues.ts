/**
 * @module issues
 * One normal form for the issues of every engine, so a caller gets the same message on Node
 * (ajv) and Workers (cfworker): wrapper keywords that only say "a child failed" are dropped when
 * the child's own issue is present, and the branches of `anyOf`/`oneOf`/`not`/`if` collapse into
 * the combinator's issue. Pure.
 */
import type { ValidationIssue } from './ports'

/** Keywords that fail only because a sub-schema failed. */
const WRAPPERS = new Set(['properties', 'patternProperties', 'items', 'prefixItems', 'additionalItems', 'allOf', '$ref', '$dynamicRef', '$recursiveRef', 'dependentSchemas', 'contains', 'unevaluatedItems', 'then', 'else', 'if', 'propertyNames'])
const COMBINATORS = new Set(['anyOf', 'oneOf', 'not'])

/**
 * Normalises engine issues: sorted by path, wrappers removed when a deeper issue explains them,
 * branch issues under a failed combinator removed, duplicates removed.
 */
export function normaliseIssues(issues: ValidationIssue[]): ValidationIssue[] {
  const combinatorPaths = issues.filter((i) => COMBINATORS.has(i.keyword)).map((i) => i.schemaPath + '/')
  const leaves = issues.filter((i) => !WRAPPERS.has(i.keyword) && !combinatorPaths.some((p) => i.schemaPath.startsWith(p)))
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
