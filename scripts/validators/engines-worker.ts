/**
 * A Worker for scripts/validators/evaluate.ts: runs JSON Schema validator engines inside workerd,
 * where code generation from strings is forbidden (so an engine that would generate code must
 * interpret), and answers with verdicts only.
 *
 * Engines: `cfworker` (the edge's Workers engine, through its own adapter, as in production),
 * `ata` (ata-validator, which falls back to its interpreted engines where `new Function` is refused;
 * all errors collected, `abortEarly: false`, as the edge needs every issue for its message),
 * `hyperjump` (@hyperjump/json-schema, an interpreter; its compile step is asynchronous).
 *
 * POST /verdicts { engine, dialect, formats: 'assert' | 'annotate', remotes, groups: [{ schema, tests: [{ data }] }] }
 *   -> [[true | false | "unusable" | "error", ...], ...] (true = valid; "unusable": the engine refused the schema)
 * POST /speed { engine, dialect, schema, data, n }
 *   -> { valid, mode }: compiles the schema, validates `data` n times with the issues of a failure
 *   built (ata's lazy `errors` read, hyperjump's BASIC output; cfworker's adapter normalises them) (`mode`: ata's engine mode,
 *   e.g. "interpreter" or "closure", never "codegen" in workerd); the caller times the request
 *   from outside (workerd's clock does not advance while a request computes).
 */
import { Validator as AtaValidator } from 'ata-validator'
import * as hyperjump07 from '@hyperjump/json-schema/draft-07'
import * as hyperjump2020 from '@hyperjump/json-schema/draft-2020-12'
import { setShouldValidateFormat } from '@hyperjump/json-schema/draft-2020-12'
import { BASIC } from '@hyperjump/json-schema/experimental'
import type { Dialect } from '../../src/core/jsonrpc/versions'
import { SchemaUnusableError } from '../../src/core/ports'
import { createCfworkerEngine } from '../../src/validators/cfworker'

type Engine = 'cfworker' | 'ata' | 'hyperjump'

interface VerdictJob {
  engine: Engine
  dialect: Dialect
  formats: 'assert' | 'annotate'
  remotes: Record<string, unknown>
  groups: { schema: unknown; tests: { data: unknown }[] }[]
}

interface SpeedJob {
  engine: Engine
  dialect: Dialect
  schema: unknown
  data: unknown
  n: number
}

const DIALECT_URI: Record<Dialect, string> = {
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2019-09': 'https://json-schema.org/draft/2019-09/schema',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
}

/** The schema with the dialect declared (ata and hyperjump read the dialect from `$schema`). */
function declared(schema: unknown, dialect: Dialect): unknown {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema
  return '$schema' in schema ? schema : { $schema: DIALECT_URI[dialect], ...schema }
}

let schemaSeq = 0
const registeredRemotes = new Set<string>()

/** A compiled validator: returns true when `data` is valid. Throws when the schema is refused. */
/** The ata validator of the last compile, to read its engine mode after use ("interpreter", ...). */
let lastAta: { _engine?: string } | null = null

async function compile(
  engine: Engine,
  schema: unknown,
  dialect: Dialect,
  formats: 'assert' | 'annotate',
  remotes: Record<string, unknown>,
  issues = false
): Promise<(data: unknown) => boolean> {
  if (engine === 'cfworker') {
    const v = createCfworkerEngine({ formats, remotes }).compile(schema, dialect)
    return (d) => v(d) === null
  }
  if (engine === 'ata') {
    const v = new AtaValidator(declared(schema, dialect) as object, {
      assertFormat: formats === 'assert',
      useDefaults: false,
      abortEarly: false,
      schemas: Object.fromEntries(Object.entries(remotes).map(([k, s]) => [k, s as object])),
    })
    lastAta = v as unknown as { _engine?: string }
    // The edge needs every issue of a failing call: ata builds its errors lazily, so read them.
    return (d) => {
      const r = v.validate(d)
      if (!r.valid) void r.errors.length
      return r.valid
    }
  }
  const hj = dialect === 'draft-07' ? hyperjump07 : hyperjump2020
  setShouldValidateFormat(formats === 'assert')
  for (const [uri, s] of Object.entries(remotes)) {
    const key = `${dialect} ${uri}`
    if (registeredRemotes.has(key)) continue
    registeredRemotes.add(key)
    try {
      hj.unregisterSchema(uri)
    } catch {
      // not registered
    }
    hj.registerSchema(s as hyperjump07.SchemaObject, uri, DIALECT_URI[dialect].replace(/#$/, ''))
  }
  const uri = `https://eval.invalid/schema/${++schemaSeq}`
  hj.registerSchema(schema as hyperjump07.SchemaObject, uri, DIALECT_URI[dialect].replace(/#$/, ''))
  const v = await hj.validate(uri)
  // FLAG output gives the verdict only; BASIC lists the failing keywords, which the edge would need.
  return issues ? (d) => v(d as never, BASIC).valid : (d) => v(d as never).valid
}

export default {
  async fetch(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname
    if (path === '/speed') {
      const job = (await request.json()) as SpeedJob
      const v = await compile(job.engine, job.schema, job.dialect, 'assert', {}, true)
      let valid = 0
      for (let i = 0; i < job.n; i++) if (v(job.data)) valid++
      return Response.json({ valid, mode: job.engine === 'ata' ? `ata ${lastAta?._engine ?? 'unknown'}` : job.engine })
    }
    const job = (await request.json()) as VerdictJob
    // Remotes are registered per dialect: clear what an earlier job of another dialect registered.
    registeredRemotes.clear()
    const out = []
    for (const g of job.groups) {
      let v: (d: unknown) => boolean
      try {
        v = await compile(job.engine, g.schema, job.dialect, job.formats, job.remotes)
      } catch (e) {
        out.push(g.tests.map(() => (e instanceof SchemaUnusableError || job.engine !== 'cfworker' ? 'unusable' : 'error')))
        continue
      }
      out.push(
        g.tests.map((t) => {
          try {
            return v(t.data)
          } catch {
            return 'error'
          }
        })
      )
    }
    return Response.json(out)
  },
}
