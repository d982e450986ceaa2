/**
 * @module core/grading/grade-counters
 * Grade counters per origin and tool (docs/design.md §6), rendered in the Prometheus text
 * exposition format. Kept in core (and not prom-client) because it must run on Workers too, where
 * prom-client's Node dependencies are unavailable; it is a counter map and a formatter, nothing more.
 */
import type { Grade } from './grade-reply'

function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').slice(0, 128)
}

/** Counts graded ids; bounded to `maxSeries` label sets (extra tools are counted as `_other`). */
export class GradeCounters {
  private readonly counts = new Map<string, number>()
  constructor(private readonly maxSeries = 10_000) {}

  /** Adds one id with `grade` for `origin` and `tool` (`-` when the id was not a tools/call). */
  count(origin: string, tool: string | undefined, grade: Grade): void {
    const name = tool === undefined ? '-' : tool.length > 64 ? tool.slice(0, 64) : tool
    let key = `${origin}\u0000${name}\u0000${grade}`
    if (!this.counts.has(key) && this.counts.size >= this.maxSeries) key = `${origin}\u0000_other\u0000${grade}`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }

  /** The current value for one series (0 when never counted). */
  get(origin: string, tool: string | undefined, grade: Grade): number {
    return this.counts.get(`${origin}\u0000${tool ?? '-'}\u0000${grade}`) ?? 0
  }

  /** Prometheus text format 0.0.4. */
  render(): string {
    const lines = ['# HELP mcp_edge_grades_total JSON-RPC ids graded by the edge.', '# TYPE mcp_edge_grades_total counter']
    for (const [key, n] of this.counts) {
      const [origin, tool, grade] = key.split('\u0000') as [string, string, string]
      lines.push(`mcp_edge_grades_total{origin="${label(origin)}",tool="${label(tool)}",grade="${grade}"} ${n}`)
    }
    return lines.join('\n') + '\n'
  }
}
