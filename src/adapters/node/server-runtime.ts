/**
 * @module adapters/node/server-runtime
 * What the standalone Node server (`startEdge`, `mcp-edge serve`) runs on beyond the package's
 * Node build: the tiered engine (cfworker, then ajv), prom-client metrics with process metrics,
 * and OpenTelemetry spans, each loaded with `import()` only when `startEdge` is called, and only
 * when its optional peer dependency is installed. Without it the server falls back to the
 * package's defaults (the cfworker engine, TextMetrics, no spans), so `mcp-edge-validator/node`
 * works in an install that lacks ajv, prom-client or @opentelemetry/api (docs/library.md,
 * "Optional peer dependencies"). The `mcp-edge` command depends on all three, so its server
 * always has them.
 */
import type { EdgeMetrics, EdgeTracer, ValidatorEngine } from '../../core/ports'
import type { RegistryStats } from '../../observe/metric-names'
import { createCfworkerEngine } from '../../validators/cfworker'
import { deferCompile } from './node-edge'

/**
 * Loads a module that needs the optional peer `peer`; `undefined` when that package is not
 * installed. Any other failure (a broken install, an error in the module) is thrown.
 */
export async function loadOptional<T>(peer: string, load: () => Promise<T>): Promise<T | undefined> {
  try {
    return await load()
  } catch (e) {
    const code = (e as { code?: unknown }).code
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((e as Error).message).includes(`'${peer}`)) return undefined
    throw e
  }
}

/** The server's engine, metrics and tracer factories, from the optional peers that are installed. */
export interface ServerParts {
  engine(): ValidatorEngine
  metrics?(registry: RegistryStats): EdgeMetrics
  tracer?(): EdgeTracer
  /** Which optional parts were found, for the start log line: e.g. `['ajv', 'prom-client', '@opentelemetry/api']`. */
  loaded: string[]
}

/** Loads what the installed optional peers allow (see the module comment). */
export async function loadServerParts(): Promise<ServerParts> {
  const [ajv, tiered, prom, otel] = await Promise.all([
    loadOptional('ajv', () => import('../../validators/ajv')),
    import('../../validators/tiered'),
    loadOptional('prom-client', () => import('../../observe/prom-metrics')),
    loadOptional('@opentelemetry/api', () => import('../../observe/otel-tracer')),
  ])
  const loaded: string[] = []
  if (ajv) loaded.push('ajv')
  if (prom) loaded.push('prom-client')
  if (otel) loaded.push('@opentelemetry/api')
  return {
    engine: ajv ? () => tiered.createTieredEngine(createCfworkerEngine(), ajv.createAjvEngine(), { defer: deferCompile }) : createCfworkerEngine,
    ...(prom ? { metrics: (registry: RegistryStats) => new prom.PromMetrics(registry) } : {}),
    ...(otel ? { tracer: () => otel.createOtelTracer() } : {}),
    loaded,
  }
}
