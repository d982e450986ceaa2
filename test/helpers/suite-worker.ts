/**
 * A test-only Worker that runs schemas and instances through the Workers engine
 * (createCfworkerEngine) inside workerd, where code generation from strings is forbidden, so the
 * JSON-Schema-Test-Suite can be run on the engine exactly where it runs in production.
 * POST { dialect, formats, remotes, groups: [{ schema, tests: [{ data }] }] }
 *   -> [[true | false | "unusable" | "error", ...], ...] (true = valid)
 */
import type { Dialect } from '../../src/core/jsonrpc/versions'
import { SchemaUnusableError } from '../../src/core/ports'
import { createCfworkerEngine } from '../../src/validators/cfworker'

interface Job {
  dialect: Dialect
  formats: 'assert' | 'annotate'
  remotes: Record<string, unknown>
  groups: { schema: unknown; tests: { data: unknown }[] }[]
}

export default {
  async fetch(request: Request): Promise<Response> {
    const job = (await request.json()) as Job
    const engine = createCfworkerEngine({ formats: job.formats, remotes: job.remotes })
    const out = job.groups.map((g) => {
      let validate
      try {
        validate = engine.compile(g.schema, job.dialect)
      } catch (e) {
        return g.tests.map(() => (e instanceof SchemaUnusableError ? 'unusable' : 'error'))
      }
      return g.tests.map((t) => {
        try {
          return validate(t.data) === null
        } catch {
          return 'error'
        }
      })
    })
    return Response.json(out)
  },
}
