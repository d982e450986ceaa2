/**
 * @module exports/otel
 * `mcp-edge-validator/otel`: OpenTelemetry spans for the edge's POSTs, origin calls and tool-list
 * pulls, on @opentelemetry/api (an optional peer dependency; no-op until the application registers
 * a tracer provider). `mcpEdge({ tracer: createOtelTracer() })` (docs/observability.md).
 */
export { createOtelTracer } from '../observe/otel-tracer'
