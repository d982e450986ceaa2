/**
 * @module exports/prometheus
 * `mcp-edge-validator/prometheus`: the edge's metrics through prom-client (an optional peer
 * dependency), in a registry of the caller's or a new one, the way @hono/prometheus takes it:
 * `const metrics = promMetrics({ registry })` and `mcpEdge({ metrics })`; the caller's own
 * `/metrics` route then renders `registry.metrics()` with the edge's families in it (docs/observability.md).
 */
export { PromMetrics, promMetrics, type PromMetricsOptions } from '../observe/prom-metrics'
