/**
 * The Grafana dashboard in the repository (docs/grafana/mcp-edge-dashboard.json) queries only
 * metrics the edge really serves: the real Node edge (startEdge) in front of the demo origin,
 * after an SDK client's handshake, tool list and call, is scraped at GET /metrics and read with
 * parse-prometheus-text-format; every metric name in every panel's PromQL `expr` and in the
 * template variables' queries (histogram `_bucket`/`_sum`/`_count` series mapped to their
 * family) is one of the served families; every `mcp_edge_*` family the edge serves has a panel;
 * and each expression parses as PromQL by `promtool check rules` (Debian's `prometheus`), with
 * Grafana's variables put in.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import { missingMessage, programPath } from '../helpers/system-programs'

const DASHBOARD = resolve(import.meta.dirname, '../../docs/grafana/mcp-edge-dashboard.json')
const PROMTOOL = programPath('promtool')

interface Panel {
  type: string
  title: string
  targets?: { expr: string }[]
  panels?: Panel[]
}
interface Dashboard {
  panels: Panel[]
  templating: { list: { name: string; type: string; query?: string | { query: string } }[] }
}

const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row')
const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })))
const variableQueries = dashboard.templating.list
  .filter((v) => v.type === 'query')
  .map((v) => ({ panel: `variable ${v.name}`, expr: typeof v.query === 'string' ? v.query : v.query!.query }))

/** PromQL functions, aggregations and keywords: names in an expression that are no metric. */
const NOT_METRICS = new Set(
  'sum min max avg group stddev stdvar count count_values bottomk topk quantile rate irate increase delta idelta deriv histogram_quantile label_values abs ceil floor round clamp clamp_min clamp_max absent absent_over_time avg_over_time max_over_time min_over_time sum_over_time count_over_time last_over_time predict_linear time vector scalar and or unless bool offset by without on ignoring group_left group_right inf nan'.split(
    ' '
  )
)

/**
 * The metric names an expression selects: string literals, label matchers `{…}`, range and
 * subquery brackets `[…]` and the label lists of `by (…)`, `without (…)`, `on (…)`, `ignoring (…)`
 * and `label_values(…, label)` dropped, then every identifier that is not a function or keyword.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/,\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)/g, ')')
  const names = [...bare.matchAll(/(?<![\w.$])[a-zA-Z_:][a-zA-Z0-9_:]*/g)].map((m) => m[0]).filter((n) => !NOT_METRICS.has(n))
  return [...new Set(names)]
}

let origin: RunningOrigin
let edge: RunningEdge
let families: Map<string, string>

beforeAll(async () => {
  origin = await startDemoOrigin()
  edge = await startEdge({ port: 0, env: { ORIGIN_URL: origin.url, STORE_FILE: 'memory' }, log: () => undefined })
  // Real traffic, so every labelled series has samples: a handshake, the tool list, a valid and a rejected call.
  const client = new Client({ name: 'dashboard-test', version: '1' })
  await client.connect(new StreamableHTTPClientTransport(new URL(edge.url)))
  await client.listTools()
  await client.callTool({ name: 'echo', arguments: { message: 'hi' } })
  await client.callTool({ name: 'get_forecast', arguments: { city: 42 } })
  await client.close()
  const res = await fetch(new URL('/metrics', edge.url))
  expect(res.status).toBe(200)
  families = new Map(parsePrometheusTextFormat(await res.text()).map((f) => [f.name, f.type]))
})
afterAll(async () => {
  await edge?.close()
  await origin?.close()
})

/** The family a series name belongs to: a histogram's `_bucket`, `_sum` and `_count` series map to it. */
function family(name: string): string {
  const base = name.replace(/_(bucket|sum|count)$/, '')
  return base !== name && families.get(base) === 'HISTOGRAM' ? base : name
}

describe('the Grafana dashboard (docs/grafana/mcp-edge-dashboard.json)', () => {
  it('reads the metric names of an expression', () => {
    expect(metricNames('histogram_quantile(0.99, sum by (le) (rate(a_bucket{origin=~"$origin"}[$__rate_interval])))')).toEqual(['a_bucket'])
    expect(metricNames('sum by (origin) (rate(x_total{grade=~"a|b"}[5m])) / sum by (origin) (rate(y_total[5m]))')).toEqual(['x_total', 'y_total'])
    expect(metricNames('label_values(mcp_edge_posts_total, origin)')).toEqual(['mcp_edge_posts_total'])
  })

  it('has panels with queries, and a datasource variable', () => {
    expect(panels.length).toBeGreaterThan(10)
    expect(exprs.length).toBeGreaterThan(panels.length)
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')?.type).toBe('datasource')
  })

  it.each([...exprs, ...variableQueries])('$panel: every metric it names is served by the edge ($expr)', ({ expr }) => {
    const names = metricNames(expr)
    expect(names.length, expr).toBeGreaterThan(0)
    for (const n of names) expect([...families.keys()], `${n} in ${expr}`).toContain(family(n))
  })

  it('every mcp_edge_* family the edge serves has a panel', () => {
    const shown = new Set(exprs.flatMap((e) => metricNames(e.expr).map(family)))
    const own = [...families.keys()].filter((n) => n.startsWith('mcp_edge_'))
    expect(own.length).toBeGreaterThan(10)
    expect(own.filter((n) => !shown.has(n))).toEqual([])
  })

  it('every expression parses as PromQL (promtool check rules, Grafana variables put in)', () => {
    if (PROMTOOL === undefined || !existsSync(PROMTOOL)) throw new Error(missingMessage('promtool'))
    const dir = mkdtempSync(join(tmpdir(), 'mcp-edge-dashboard-'))
    try {
      const rules = exprs.map(
        (e, i) => `      - record: dashboard:expr_${i}\n        expr: ${JSON.stringify(e.expr.replaceAll('$__rate_interval', '5m').replaceAll('$origin', '.*'))}`
      )
      const file = join(dir, 'rules.yml')
      writeFileSync(file, `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`)
      const out = spawnSync(PROMTOOL, ['check', 'rules', file], { encoding: 'utf8' })
      expect(out.status, out.stdout + out.stderr).toBe(0)
      expect(out.stdout).toContain(`${exprs.length} rules found`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
