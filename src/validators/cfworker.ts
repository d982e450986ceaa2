/**
 * @module validators/cfworker
 * The Workers engine: @cfworker/json-schema, which interprets schemas without generating code
 * (`new Function` is forbidden in workerd at request time). The dialect is passed explicitly
 * because the library ignores `$schema`.
 */
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema'
import type { Dialect } from '../core/era'
import { normaliseIssues } from '../core/issues'
import { SchemaUnusableError, type CompiledValidator, type ValidationIssue, type ValidatorEngine } from '../core/ports'

const DRAFT: Record<Dialect, '7' | '2019-09' | '2020-12'> = { 'draft-07': '7', '2019-09': '2019-09', '2020-12': '2020-12' }

function pointer(loc: string): string {
  return loc.replace(/^#/, '')
}

function toIssue(u: OutputUnit): ValidationIssue {
  const issue: ValidationIssue = { path: pointer(u.instanceLocation), keyword: u.keyword, schemaPath: pointer(u.keywordLocation) }
  if (u.keyword === 'required') {
    // cfworker: 'Instance does not have required property "x".' (a schema name, not a value)
    const m = /required property "([^"]*)"/.exec(u.error)
    if (m) issue.property = m[1]
  }
  if (u.keyword === 'additionalProperties' || u.keyword === 'unevaluatedProperties' || u.keyword === 'false') {
    const m = /^Property "([^"]*)"/.exec(u.error)
    if (m) {
      issue.property = m[1]
      issue.keyword = u.keyword === 'false' ? 'additionalProperties' : u.keyword
      // cfworker reports the member's location; the issue names the parent plus the member.
      const suffix = '/' + m[1]!.replace(/~/g, '~0').replace(/\//g, '~1')
      if (issue.path.endsWith(suffix)) issue.path = issue.path.slice(0, -suffix.length)
    }
  }
  return issue
}

/** Creates the cfworker engine. */
export function createCfworkerEngine(): ValidatorEngine {
  return {
    name: 'cfworker',
    compile(schema: unknown, dialect: Dialect): CompiledValidator {
      if (typeof schema !== 'object' && typeof schema !== 'boolean') throw new SchemaUnusableError('its inputSchema is not a JSON Schema object')
      let v: Validator
      try {
        v = new Validator(schema as Schema, DRAFT[dialect], false)
        // Dry run: cfworker resolves $ref lazily; an unresolvable one must surface now, not per call.
        v.validate({})
      } catch {
        throw new SchemaUnusableError('its inputSchema has a $ref the edge cannot resolve (remote references are never fetched)')
      }
      return (value: unknown) => {
        const r = v.validate(value)
        return r.valid ? null : normaliseIssues(r.errors.map(toIssue))
      }
    },
  }
}
