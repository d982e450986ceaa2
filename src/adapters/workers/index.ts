/**
 * @module adapters/workers
 * Workers entry: KV binding `TOOL_SCHEMAS`, vars as in docs/design.md §8, the cfworker engine
 * (no code generation: workerd forbids `new Function` at request time) and `fetch` to the origin.
 * Ports are built once per isolate.
 */
import { createApp } from '../../app'
import { loadConfig } from '../../core/config'
import { GradeCounters } from '../../core/grading/grade-counters'
import type { EdgeDeps } from '../../core/grading/exchange'
import type { KvStore } from '../../core/ports'
import { createToolRegistry } from '../../core/validation/tool-registry'
import { createCfworkerEngine } from '../../validators/cfworker'
import { createFetchOriginClient } from './fetch-origin-client'

/** The Worker's bindings. */
export interface Env {
  TOOL_SCHEMAS: KvStore
  [name: string]: unknown
}

interface ExecutionContextLike {
  waitUntil(p: Promise<unknown>): void
}

let cached: { env: Env; deps: EdgeDeps } | null = null
let ctxForDefer: ExecutionContextLike | null = null

function depsFor(env: Env): EdgeDeps {
  if (cached && cached.env === env) return cached.deps
  const vars: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(env)) if (typeof v === 'string') vars[k] = v
  const config = loadConfig(vars)
  const deps: EdgeDeps = {
    config,
    registry: createToolRegistry(config, env.TOOL_SCHEMAS, createCfworkerEngine()),
    origin: createFetchOriginClient(),
    log: (r) => console.log(JSON.stringify(r)),
    defer: (p) => (ctxForDefer ? ctxForDefer.waitUntil(p) : void p.catch(() => undefined)),
    metrics: new GradeCounters(),
  }
  cached = { env, deps }
  return deps
}

const app = createApp((c) => depsFor(c.env as Env))

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContextLike): Response | Promise<Response> {
    ctxForDefer = ctx
    return app.fetch(request, env, ctx as never)
  },
}
