/**
 * @module observe/prom-metrics
 * The {@link EdgeMetrics} port on Node: the edge's figures ({@link MetricState}) exported through
 * a prom-client `Registry`, next to prom-client's default process and Node metrics
 * (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `nodejs_eventloop_lag_seconds`,
 * `nodejs_heap_size_used_bytes`, GC durations, ...). Each edge has its own registry (tests run
 * several edges in one process).
 *
 * The edge's families are registered as prom-client metric objects whose `get()` reads the state
 * at scrape time (prom-client's `Registry.registerMetric`), so prom-client formats everything and
 * the hot path only touches the state (metric-state.ts says why).
 */
import { collectDefaultMetrics, Registry, type Metric } from 'prom-client'
import type { RegistryStats } from './metric-names'
import { MetricState } from './metric-state'

/** Options of {@link PromMetrics} and {@link promMetrics}. */
export interface PromMetricsOptions {
  /**
   * The prom-client registry the edge's families are registered in (as @hono/prometheus takes
   * it); default: a new one. A registry of the caller's keeps its own metrics, and gets no
   * default metrics from the edge unless `defaultMetrics: true`.
   */
  registry?: Registry
  /** prom-client's process and Node metrics (`collectDefaultMetrics`) in that registry; default: true for a new registry, false for a given one. */
  defaultMetrics?: boolean
}

/** prom-client metrics on Node; `registryStats` gives the tool registry's figures at scrape time. */
export class PromMetrics extends MetricState {
  readonly register: Registry
  readonly contentType: string

  constructor(registryStats?: RegistryStats, opts: PromMetricsOptions = {}) {
    super(registryStats)
    this.register = opts.registry ?? new Registry()
    this.contentType = this.register.contentType
    if (opts.defaultMetrics ?? opts.registry === undefined) collectDefaultMetrics({ register: this.register })
    for (const snap of this.snapshots) {
      const first = snap()
      // The shape prom-client's Registry reads from a metric: name, help, type and get().
      const metric = {
        name: first.name,
        help: first.help,
        type: first.type,
        aggregator: 'sum',
        get: async () => {
          const f = snap()
          return { name: f.name, help: f.help, type: f.type, aggregator: 'sum', values: f.samples.map((s) => ({ metricName: s.name, labels: s.labels, value: s.value })) }
        },
      }
      this.register.registerMetric(metric as unknown as Metric<string>)
    }
  }

  render(): Promise<string> {
    return this.register.metrics()
  }
}

/**
 * The edge's metrics in a prom-client registry: `mcpEdge({ metrics: promMetrics({ registry }) })`.
 * The tool registry's figures (`mcp_edge_registry_*`) need the edge's registry and are left out
 * here; the standalone server (`startEdge`) has them.
 */
export function promMetrics(opts: PromMetricsOptions = {}): PromMetrics {
  return new PromMetrics(undefined, opts)
}
