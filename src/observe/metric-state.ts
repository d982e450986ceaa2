/**
 * @module observe/metric-state
 * The figures behind `/metrics`, kept without dependencies so the hot path stays cheap on both
 * runtimes: counters and a gauge in Maps keyed by their joined label values, histograms as bucket
 * arrays per origin. {@link MetricState.families} snapshots them at scrape time; the Workers entry
 * renders that as Prometheus text ({@link renderText}, src/observe/text-metrics.ts) and the Node
 * entry hands it to prom-client (src/observe/prom-metrics.ts).
 *
 * Why not record through prom-client itself: its `inc`/`observe` validate and hash the label
 * object on every call; the calls of one forwarded POST cost 5-8 us through prom-client children
 * against well under 1 us here (`node --import tsx scripts/bench/metrics-cost.ts`).
 * Label sets are bounded: past {@link MAX_SERIES} per series, new ones are counted with their
 * last label `_other`. Series names and labels: src/observe/metric-names.ts, docs/observability.md.
 */
import type { EdgeMetrics, PostFigures } from '../core/ports'
import { EDGE_SECONDS_BUCKETS, methodLabel, ORIGIN_SECONDS_BUCKETS, REGISTRY_SERIES, SERIES, toolLabel, type RegistryStats } from './metric-names'

/** Most label sets kept per series. */
export const MAX_SERIES = 10_000

/** One sample of a family: its metric name (with `_bucket`, `_sum`, `_count` for histograms), labels and value. */
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** A metric family at scrape time. */
export interface FamilySnapshot {
  name: string
  help: string
  type: 'counter' | 'gauge' | 'histogram'
  samples: Sample[]
}

interface Cell {
  values: string[]
  n: number
}

/** A labelled counter or gauge. */
class Family {
  private readonly cells = new Map<string, Cell>()
  constructor(readonly spec: { name: string; help: string; labels: readonly string[] }) {}
  /** Adds `n` to the cell of label values `v0, v1, v2` (as many as the family has), whose joined form is `key`. */
  add(key: string, n: number, v0: string, v1?: string, v2?: string): void {
    this.cell(key, v0, v1, v2).n += n
  }
  /** The cell of label values `v0, v1, v2` whose joined form is `key`, created (or `_other` past {@link MAX_SERIES}) when new. */
  cell(key: string, v0: string, v1?: string, v2?: string): Cell {
    let c = this.cells.get(key)
    if (c === undefined) {
      let v = v2 !== undefined ? [v0, v1!, v2] : v1 !== undefined ? [v0, v1] : [v0]
      if (this.cells.size >= MAX_SERIES) {
        v = [...v.slice(0, -1), '_other']
        key = v.join('\u0000')
        c = this.cells.get(key)
      }
      if (c === undefined) this.cells.set(key, (c = { values: v, n: 0 }))
    }
    return c
  }
  /** The value of the cell with joined label values `key` (0 when absent). */
  value(key: string): number {
    return this.cells.get(key)?.n ?? 0
  }
  snapshot(type: 'counter' | 'gauge'): FamilySnapshot {
    const samples: Sample[] = []
    for (const c of this.cells.values()) {
      const labels: Record<string, string> = {}
      this.spec.labels.forEach((l, i) => (labels[l] = c.values[i] ?? ''))
      samples.push({ name: this.spec.name, labels, value: c.n })
    }
    return { name: this.spec.name, help: this.spec.help, type, samples }
  }
}

interface Buckets {
  counts: number[]
  sum: number
  count: number
}

/** A histogram with one label, `origin`. */
class OriginHistogram {
  private readonly byOrigin = new Map<string, Buckets>()
  constructor(
    readonly spec: { name: string; help: string },
    private readonly bounds: number[]
  ) {}
  /** The origin of the last observation and its buckets (one origin mostly: no lookup then). */
  private lastOrigin: string | undefined
  private last: Buckets | undefined
  observe(origin: string, v: number): void {
    let h = origin === this.lastOrigin ? this.last : this.byOrigin.get(origin)
    if (h === undefined) {
      if (this.byOrigin.size >= MAX_SERIES) return
      this.byOrigin.set(origin, (h = { counts: new Array<number>(this.bounds.length).fill(0), sum: 0, count: 0 }))
    }
    this.lastOrigin = origin
    this.last = h
    const b = this.bounds
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]!) {
        h.counts[i]!++
        break
      }
    }
    h.sum += v
    h.count++
  }
  snapshot(): FamilySnapshot {
    const samples: Sample[] = []
    const { name } = this.spec
    for (const [origin, h] of this.byOrigin) {
      let acc = 0
      this.bounds.forEach((le, i) => {
        acc += h.counts[i]!
        samples.push({ name: `${name}_bucket`, labels: { origin, le: String(le) }, value: acc })
      })
      samples.push({ name: `${name}_bucket`, labels: { origin, le: '+Inf' }, value: h.count })
      samples.push({ name: `${name}_sum`, labels: { origin }, value: h.sum })
      samples.push({ name: `${name}_count`, labels: { origin }, value: h.count })
    }
    return { name, help: this.spec.help, type: 'histogram', samples }
  }
}

/** The {@link EdgeMetrics} recording side, shared by both renderings. `registry` gives the tool registry's figures at scrape time. */
export abstract class MetricState implements EdgeMetrics {
  abstract readonly contentType: string
  private readonly grades = new Family(SERIES.grades)
  private readonly requests = new Family(SERIES.requests)
  private readonly posts = new Family(SERIES.posts)
  private readonly requestBytes = new Family(SERIES.requestBytes)
  private readonly responseBytes = new Family(SERIES.responseBytes)
  private readonly streams = new Family(SERIES.openStreams)
  private readonly denials = new Family(SERIES.denials)
  private readonly toolPins = new Family(SERIES.toolPins)
  private readonly pinBlocks = new Family(SERIES.pinBlocks)
  private readonly resultFindings = new Family(SERIES.resultFindings)
  private readonly virtualLeftOut = new Family(SERIES.virtualLeftOut)
  private readonly edgeSeconds = new OriginHistogram(SERIES.edgeSeconds, EDGE_SECONDS_BUCKETS)
  private readonly originSeconds = new OriginHistogram(SERIES.originSeconds, ORIGIN_SECONDS_BUCKETS)

  constructor(private readonly registry?: RegistryStats) {}

  /**
   * The cells of the last {@link countGrade}: the ids of a batch mostly share their origin,
   * method, tool and grade, and then count into the same two cells without building their keys
   * again. A cell, once made, stays in its family, so holding it counts exactly what a lookup would.
   */
  private lastGrade: { origin: string; method: string; tool: string | undefined; grade: string; grades: Cell; requests: Cell } | undefined

  countGrade(origin: string, method: string, tool: string | undefined, grade: string): void {
    const last = this.lastGrade
    if (last !== undefined && last.origin === origin && last.method === method && last.tool === tool && last.grade === grade) {
      last.grades.n++
      last.requests.n++
      return
    }
    const t = toolLabel(tool)
    const grades = this.grades.cell(origin + '\u0000' + t + '\u0000' + grade, origin, t, grade)
    const m = methodLabel(method)
    const requests = this.requests.cell(origin + '\u0000' + m + '\u0000' + grade, origin, m, grade)
    grades.n++
    requests.n++
    this.lastGrade = { origin, method, tool, grade, grades, requests }
  }

  /** The `posts` cells of the last origin seen, by `forwarded` (the same holding as {@link lastGrade}). */
  private lastPosts: { origin: string; forwarded: Cell | undefined; local: Cell | undefined } | undefined

  observePost(f: PostFigures): void {
    let last = this.lastPosts
    if (last === undefined || last.origin !== f.origin) last = this.lastPosts = { origin: f.origin, forwarded: undefined, local: undefined }
    if (f.forwarded) (last.forwarded ??= this.posts.cell(f.origin + '\u0000origin', f.origin, 'origin')).n++
    else (last.local ??= this.posts.cell(f.origin + '\u0000edge', f.origin, 'edge')).n++
    this.edgeSeconds.observe(f.origin, f.edgeSeconds)
    if (f.originSeconds !== undefined) this.originSeconds.observe(f.origin, f.originSeconds)
  }

  countBytes(origin: string, direction: 'in' | 'out', bytes: number): void {
    if (bytes > 0) (direction === 'in' ? this.requestBytes : this.responseBytes).add(origin, bytes, origin)
  }

  countDenial(reason: string): void {
    this.denials.add(reason, 1, reason)
  }

  /** The `mcp_edge_denials_total` count of one reason (0 when never counted): for tests and embedders. */
  denialCount(reason: string): number {
    return this.denials.value(reason)
  }

  streamOpen(origin: string, delta: 1 | -1): void {
    this.streams.add(origin, delta, origin)
  }

  setToolPins(origin: string, state: 'approved' | 'changed' | 'pending' | 'removed', n: number): void {
    const key = origin + '\u0000' + state
    this.toolPins.add(key, n - this.toolPins.value(key), origin, state)
  }

  countPinBlock(origin: string, reason: string): void {
    this.pinBlocks.add(origin + '\u0000' + reason, 1, origin, reason)
  }

  countResultFinding(origin: string, category: string, action: string, n: number): void {
    this.resultFindings.add(origin + '\u0000' + category + '\u0000' + action, n, origin, category, action)
  }

  countVirtualLeftOut(server: string, origin: string): void {
    this.virtualLeftOut.add(server + '\u0000' + origin, 1, server, origin)
  }

  /** The `mcp_edge_grades_total` count of one series (0 when never counted): for tests and embedders. */
  get(origin: string, tool: string | undefined, grade: string): number {
    return this.grades.value(origin + '\u0000' + toolLabel(tool) + '\u0000' + grade)
  }

  /** One snapshot function per family of the edge, in exposition order. */
  readonly snapshots: (() => FamilySnapshot)[] = [
    () => this.grades.snapshot('counter'),
    () => this.requests.snapshot('counter'),
    () => this.posts.snapshot('counter'),
    () => this.edgeSeconds.snapshot(),
    () => this.originSeconds.snapshot(),
    () => this.requestBytes.snapshot('counter'),
    () => this.responseBytes.snapshot('counter'),
    () => this.streams.snapshot('gauge'),
    () => this.denials.snapshot('counter'),
    () => this.toolPins.snapshot('gauge'),
    () => this.pinBlocks.snapshot('counter'),
    () => this.resultFindings.snapshot('counter'),
    () => this.virtualLeftOut.snapshot('counter'),
    ...REGISTRY_SERIES.map((r) => (): FamilySnapshot => ({
      name: r.name,
      help: r.help,
      type: 'counter',
      samples: [{ name: r.name, labels: {}, value: this.registry?.()[r.stat] ?? 0 }],
    })),
  ]

  /** Every family of the edge, as of now. */
  families(): FamilySnapshot[] {
    return this.snapshots.map((s) => s())
  }

  abstract render(): Promise<string>
}

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').slice(0, 128)
}

function num(n: number): string {
  return Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN'
}

/** Prometheus text exposition format 0.0.4 of `families`. */
export function renderText(families: FamilySnapshot[]): string {
  const out: string[] = []
  for (const f of families) {
    out.push(`# HELP ${f.name} ${f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`, `# TYPE ${f.name} ${f.type}`)
    for (const s of f.samples) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${esc(v)}"`)
        .join(',')
      out.push(`${s.name}${labels ? `{${labels}}` : ''} ${num(s.value)}`)
    }
  }
  return out.join('\n') + '\n'
}
