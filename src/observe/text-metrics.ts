/**
 * @module observe/text-metrics
 * The {@link EdgeMetrics} port without dependencies: {@link MetricState}'s figures rendered as
 * Prometheus text 0.0.4. The Workers entry uses it (prom-client needs Node built-ins); the
 * figures are per isolate, as a Worker's memory is. Series: docs/observability.md.
 */
import { MetricState, renderText } from './metric-state'

/** Dependency-free metrics (Workers). */
export class TextMetrics extends MetricState {
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8'

  async render(): Promise<string> {
    return renderText(this.families())
  }
}
