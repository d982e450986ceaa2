/**
 * @module observe/otel-tracer
 * The tracing port ({@link EdgeTracer}) on `@opentelemetry/api`: spans go to whatever tracer
 * provider the user registered (`trace.setGlobalTracerProvider`, or an SDK's `register()`);
 * without one the API hands out non-recording spans and the edge skips their attributes, so the
 * cost is a few object allocations per POST. The Node entry uses it (the Workers entry does
 * not: bundle size, docs/observability.md).
 *
 * Spans (docs/observability.md): `mcp.post` (server; the client's `traceparent` is its parent),
 * `mcp.validate` (internal, per tools/call), `mcp.origin` (client; its context goes to the origin
 * as `traceparent`).
 *
 * Why the W3C `traceparent` is read and written here instead of through the API's global
 * propagator: the API's default propagator is a no-op until an SDK installs one, and the edge must
 * honour and forward the header in any case; the format is fixed by W3C Trace Context
 * (src/core/observe/request-id.ts parses it), and `@opentelemetry/core`'s propagator would add a
 * runtime dependency to the Worker bundle for the same two lines.
 */
import { ProxyTracerProvider, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { EdgeTracer, TraceSpan } from '../core/ports'
import { parseTraceparent } from '../core/observe/request-id'

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const

/** A {@link TraceSpan} over an OpenTelemetry span. */
class OtelSpan implements TraceSpan {
  readonly recording: boolean
  constructor(
    readonly span: Span,
    readonly ctx: Context
  ) {
    this.recording = span.isRecording()
  }
  setAttributes(attributes: Record<string, string | number | boolean>): void {
    this.span.setAttributes(attributes)
  }
  fail(description: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: description })
  }
  end(): void {
    this.span.end()
  }
  traceparent(): string | undefined {
    const sc = this.span.spanContext()
    if (!this.recording && !trace.isSpanContextValid(sc)) return undefined
    return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED ? '01' : '00'}`
  }
}

/**
 * The edge's tracer on the global OpenTelemetry API.
 * @param name the instrumentation scope name (default `mcp-edge-validator`)
 */
export function createOtelTracer(name = 'mcp-edge-validator', version?: string): EdgeTracer {
  return {
    start(spanName, parent, kind = 'internal') {
      // Looked up per span, not kept: a provider registered (or replaced) after the edge started
      // gets the spans. With none registered the API's no-op spans still cost about 1.3 us for a
      // POST's three (scripts/bench/metrics-cost.ts), so there is no span at all (undefined: the
      // stages skip the span sites, EdgeTracer).
      const global = trace.getTracerProvider()
      const tracer: Tracer | undefined = global instanceof ProxyTracerProvider ? global.getDelegateTracer(name, version) : global.getTracer(name, version)
      if (tracer === undefined) return undefined
      let ctx: Context
      if (parent instanceof OtelSpan) ctx = parent.ctx
      else {
        const tp = parseTraceparent((parent as { traceparent: string | null }).traceparent)
        ctx = tp ? trace.setSpanContext(ROOT_CONTEXT, { traceId: tp.traceId, spanId: tp.spanId, traceFlags: tp.flags & TraceFlags.SAMPLED, isRemote: true }) : ROOT_CONTEXT
      }
      const span = tracer.startSpan(spanName, { kind: KINDS[kind] }, ctx)
      return new OtelSpan(span, trace.setSpan(ctx, span))
    },
  }
}
