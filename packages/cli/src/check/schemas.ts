/**
 * @module check/schemas
 * What the edge makes of each tool a server lists: the dialect of its `inputSchema` for a protocol
 * version, whether both of the edge's engines compile it, and why the edge could not validate it
 * (its schema portability check). Pure apart from compiling (no I/O); never throws.
 */
import {
  createAjvEngine,
  createCfworkerEngine,
  dialectOf,
  isObject,
  portabilityProblem,
  SchemaUnusableError,
  type CompiledValidator,
  type Dialect,
  type ProtocolVersion,
  type ValidatorEngine,
} from './edge-rules'

/** One listed tool as check uses it. */
export interface ListedTool {
  name: string
  inputSchema: unknown
  outputSchema?: unknown
  /** Annotations as listed (`readOnlyHint` etc.); shown, never trusted to decide what is called. */
  annotations?: Record<string, unknown>
}

/** The edge's reading of one tool's schemas. */
export interface SchemaReport {
  /** The dialect the edge validates with, null when `$schema` names one it does not support. */
  dialect: Dialect | null
  /** Why the schema breaks the MCP tool shape (`inputSchema` must be an object with `type: "object"`), or null. */
  shapeProblem: string | null
  /** Why neither engine can use the schema (it does not compile), or null. */
  compileProblem: string | null
  /** Why the edge would not validate calls against it (D8: forwarded `unvalidated`), or null. */
  edgeProblem: string | null
  /** The compiled input validator (ajv, or cfworker when only it compiles), null when unusable. */
  validate: CompiledValidator | null
  /** The compiled output validator, when the tool declares a usable `outputSchema`. */
  validateOutput: CompiledValidator | null
  /** Why the `outputSchema` cannot be used, or null. */
  outputProblem: string | null
}

let engines: ValidatorEngine[] | null = null
function bothEngines(): ValidatorEngine[] {
  engines ??= [createAjvEngine(), createCfworkerEngine()]
  return engines
}

function compileWithBoth(schema: unknown, dialect: Dialect): { validate: CompiledValidator | null; problem: string | null; disagree: boolean } {
  const results = bothEngines().map((e) => {
    try {
      return e.compile(schema, dialect)
    } catch (err) {
      return err instanceof SchemaUnusableError ? err : new SchemaUnusableError('its schema could not be compiled')
    }
  })
  const ok = results.filter((r): r is CompiledValidator => typeof r === 'function')
  const firstProblem = results.find((r): r is SchemaUnusableError => r instanceof SchemaUnusableError)
  return { validate: ok[0] ?? null, problem: ok.length === 0 ? (firstProblem?.reason ?? 'its schema could not be compiled') : null, disagree: ok.length === 1 }
}

/**
 * Reads one tool's schemas the way the edge would for `version`.
 * @returns the report; `validate` is what check uses to prove its generated arguments valid
 */
export function reportSchema(tool: ListedTool, version: ProtocolVersion): SchemaReport {
  const s = tool.inputSchema
  const shapeProblem = !isObject(s) ? 'its inputSchema is not a JSON object' : s.type !== 'object' ? 'its inputSchema lacks type: "object"' : null
  const dialect = dialectOf(s, version)
  const out: SchemaReport = { dialect, shapeProblem, compileProblem: null, edgeProblem: null, validate: null, validateOutput: null, outputProblem: null }
  if (dialect === null) {
    out.edgeProblem = 'its inputSchema declares a JSON Schema dialect the edge does not support'
  } else {
    const c = compileWithBoth(s, dialect)
    out.validate = c.validate
    out.compileProblem = c.problem
    const portability = portabilityProblem(s)
    out.edgeProblem = portability ?? (c.disagree ? "the edge's two engines disagree on it (one cannot compile it)" : null)
  }
  if (tool.outputSchema !== undefined) {
    const od = dialectOf(tool.outputSchema, version)
    if (od === null) out.outputProblem = 'its outputSchema declares a JSON Schema dialect the edge does not support'
    else {
      const c = compileWithBoth(tool.outputSchema, od)
      out.validateOutput = c.validate
      out.outputProblem = c.problem ?? portabilityProblem(tool.outputSchema, 'outputSchema')
    }
  }
  return out
}

/**
 * The tools of a `tools/list` result, in order; entries without a string `name` are skipped and
 * counted.
 */
export function listedTools(result: unknown): { tools: ListedTool[]; malformed: number } {
  const list = isObject(result) && Array.isArray(result.tools) ? result.tools : []
  const tools: ListedTool[] = []
  let malformed = 0
  for (const t of list) {
    if (!isObject(t) || typeof t.name !== 'string') {
      malformed++
      continue
    }
    tools.push({
      name: t.name,
      inputSchema: t.inputSchema,
      ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}),
      ...(isObject(t.annotations) ? { annotations: t.annotations } : {}),
    })
  }
  return { tools, malformed }
}
