/**
 * @module validators/ajv
 * The Node engine: ajv, compiled (code generation, so never used on Workers). One ajv instance
 * per dialect (draft-07, 2019-09, 2020-12) with ajv-formats; `allErrors` so a caller learns every
 * problem at once; remote `$ref`s are never fetched (no `loadSchema`): such a schema is unusable.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { Dialect } from '../core/era'
import { normaliseIssues } from '../core/issues'
import { SchemaUnusableError, type CompiledValidator, type ValidationIssue, type ValidatorEngine } from '../core/ports'

// ajv-formats is CommonJS; its default export arrives wrapped under some bundlers.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: unknown) => void

const OPTIONS = { allErrors: true, strict: false, logger: false, addUsedSchema: false, validateFormats: true } as const

function toIssue(e: ErrorObject): ValidationIssue {
  const issue: ValidationIssue = { path: e.instancePath, keyword: e.keyword, schemaPath: e.schemaPath.replace(/^#/, '') }
  const p = e.params as { missingProperty?: string; additionalProperty?: string; unevaluatedProperty?: string }
  const prop = p.missingProperty ?? p.additionalProperty ?? p.unevaluatedProperty
  if (prop !== undefined) issue.property = prop
  return issue
}

/** Creates the ajv engine (one instance per dialect, created lazily). */
export function createAjvEngine(): ValidatorEngine {
  const instances = new Map<Dialect, Ajv>()
  const get = (d: Dialect): Ajv => {
    let a = instances.get(d)
    if (!a) {
      a = d === '2020-12' ? new Ajv2020(OPTIONS) : d === '2019-09' ? new Ajv2019(OPTIONS) : new Ajv(OPTIONS)
      addFormats(a)
      instances.set(d, a)
    }
    return a
  }
  return {
    name: 'ajv',
    compile(schema: unknown, dialect: Dialect): CompiledValidator {
      const ajv = get(dialect)
      let fn: ValidateFunction
      try {
        // $schema is dropped: the dialect is already chosen, and ajv would refuse a meta-schema it lacks.
        const copy = typeof schema === 'object' && schema !== null ? { ...(schema as object) } : schema
        if (typeof copy === 'object' && copy !== null) delete (copy as { $schema?: unknown }).$schema
        fn = ajv.compile(copy as object)
      } catch (e) {
        const missingRef = e instanceof Error && /can't resolve reference|MissingRef/i.test(e.message + e.constructor.name)
        throw new SchemaUnusableError(missingRef ? 'its inputSchema has a $ref the edge cannot resolve (remote references are never fetched)' : 'its inputSchema is not a valid JSON Schema')
      }
      return (value: unknown) => (fn(value) ? null : normaliseIssues((fn.errors ?? []).map(toIssue)))
    },
  }
}
