// The subset of the candidate engines' APIs that scripts/validators/engines-worker.ts uses. The
// packages are not dependencies of the project (installed on demand by the evaluation, see
// docs/validators.md); when they are installed their own declarations take precedence.
declare module 'ata-validator' {
  export class Validator {
    constructor(schema: object, options?: { assertFormat?: boolean; useDefaults?: boolean; abortEarly?: boolean; schemas?: Record<string, object> })
    validate(data: unknown): { valid: boolean; errors: unknown[] }
  }
}
declare module '@hyperjump/json-schema/draft-07' {
  export type SchemaObject = { [keyword: string]: unknown }
  export const registerSchema: (schema: SchemaObject, retrievalUri?: string, contextDialectId?: string) => void
  export const unregisterSchema: (retrievalUri: string) => void
  export const validate: (url: string) => Promise<(value: never, outputFormat?: unknown) => { valid: boolean }>
}
declare module '@hyperjump/json-schema/draft-2020-12' {
  export type SchemaObject = { [keyword: string]: unknown }
  export const registerSchema: (schema: SchemaObject, retrievalUri?: string, contextDialectId?: string) => void
  export const unregisterSchema: (retrievalUri: string) => void
  export const validate: (url: string) => Promise<(value: never, outputFormat?: unknown) => { valid: boolean }>
  export const setShouldValidateFormat: (isEnabled: boolean | undefined) => void
}
declare module '@hyperjump/json-schema/experimental' {
  export const BASIC: 'BASIC'
}
