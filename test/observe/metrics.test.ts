/**
 * `GET /metrics` on both runtimes (Node: prom-client, src/observe/prom-metrics.ts; Workers: the
 * dependency-free text, src/observe/text-metrics.ts) after a scripted mix of calls, read with a
 * real Prometheus text parser (parse-prometheus-text-format) and checked by `promtool check
 * metrics` (Debian's `prometheus` package): the latency histograms' buckets move, the request
 * counts by method and grade, locally answered vs forwarded, bytes, the open SSE streams of a
 * held GET stream, and the registry counters match what the test caused (KV reads, memory hits,
 * compiles, schema errors, refreshes, refresh failures and refusals, each checked against the
 * origin's own count where the origin sees it). `METRICS_TOKEN` guards the route.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ReceivedRequest, type ScriptedHandler, type ScriptedOrigin } from '../helpers/scripted-origin'
import { call, countMethod, eventually, rpc, serveMcp, type McpScript } from '../helpers/mcp-script'
import { missingMessage, programPath } from '../helpers/system-programs'
import { toolKey } from '../../src/core/validation/tool-store'

const PROMTOOL = programPath('promtool')
const TOKEN = 'metrics-token-1234'

type Family = { name: string; type: string; metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string; sum?: string }[] }

const WEATHER = { name: 'weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } }
const STREAMY = { name: 'streamy', inputSchema: { type: 'object' } }

describe.each(RUNTIMES)('metrics on $name', ({ name, start }) => {
  let origin: ScriptedOrigin
  let script: McpScript
  let edge: EdgeUnderTest
  let held: ServerResponse | null = null
  const scrapeText = async (auth = `Bearer ${TOKEN}`) => {
    const res = await fetch(new URL('/metrics', edge.url), { headers: { authorization: auth } })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    return res.text()
  }
  const scrape = async () => {
    const families = parsePrometheusTextFormat(await scrapeText()) as Family[]
    return Object.fromEntries(families.map((f) => [f.name, f]))
  }
  /** The value of a counter or gauge series whose labels include `labels` (0 when absent). */
  const value = (fams: Record<string, Family>, metric: string, labels: Record<string, string> = {}) => {
    const f = fams[metric]
    const m = f?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v))
    return m ? Number(m.value) : 0
  }

  beforeAll(async () => {
    origin = await startScriptedOrigin()
    let mcp: ScriptedHandler = () => undefined
    script = serveMcp({ ...origin, handle: (h) => void (mcp = h) }, { pages: [[WEATHER, STREAMY]] })
    script.call = (tool, _args, id, res) => {
      if (tool !== 'streamy') return undefined
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.end(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'streamed' }] } })}\n\n`)
      return undefined
    }
    origin.handle((req: ReceivedRequest, res) => {
      if (req.method === 'GET') {
        // The standalone SSE stream, held open until the test lets it go.
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(': open\n\n')
        held = res
        return
      }
      return mcp(req, res)
    })
    edge = await start({ ORIGIN_URL: origin.url, METRICS_TOKEN: TOKEN, REFRESH_MIN_INTERVAL_MS: '0', REFRESH_BUDGET_PER_MIN: '4', UNKNOWN_TOOL: 'reject' })
  })
  afterAll(async () => {
    held?.end()
    await edge?.close()
    await origin?.close()
  })

  it('requires METRICS_TOKEN when it is set', async () => {
    expect((await fetch(new URL('/metrics', edge.url))).status).toBe(401)
    expect((await fetch(new URL('/metrics', edge.url), { headers: { authorization: 'Bearer wrong-token-of-other-length' } })).status).toBe(401)
    expect((await fetch(new URL('/metrics', edge.url), { headers: { authorization: 'Bearer metrics-token-123X' } })).status).toBe(401)
  })

  it('after a scripted mix of calls: histograms, request counts, bytes and registry counters match what was done', async () => {
    const before = await scrape()
    const reads0 = value(before, 'mcp_edge_registry_kv_reads_total')
    // 1. First call of a tool: no record yet -> a pull (refresh 1), then validated and forwarded.
    const first = await rpc(edge.url, call(1, 'weather', { city: 'Paris' }))
    expect(first.json.result.content[0].text).toBe('ok')
    expect(countMethod(origin, 'initialize')).toBe(1)
    const s1 = await scrape()
    // The first lookup read the caller's (anonymous) private scope and the public one (docs/scope.md):
    // a miss in both; then the pull, which holds what it learned in memory, and the private scope
    // read once more before the public entry is found in memory: 3 KV reads, all caused here.
    expect(value(s1, 'mcp_edge_registry_kv_reads_total') - reads0).toBe(3)
    expect(value(s1, 'mcp_edge_registry_refreshes_total')).toBe(1)
    // The pull learned two tools: two compiles.
    expect(value(s1, 'mcp_edge_registry_compiles_total')).toBe(2)

    // 2. Five more valid calls (memory hits, no KV read) and three invalid ones (answered by the edge).
    for (let i = 0; i < 5; i++) expect((await rpc(edge.url, call(10 + i, 'weather', { city: 'Oslo' }))).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await rpc(edge.url, call(20 + i, 'weather', { town: 'Oslo' }))).json.result.isError).toBe(true)
    const s2 = await scrape()
    expect(value(s2, 'mcp_edge_registry_kv_reads_total')).toBe(value(s1, 'mcp_edge_registry_kv_reads_total'))
    expect(value(s2, 'mcp_edge_registry_memory_hits_total') - value(s1, 'mcp_edge_registry_memory_hits_total')).toBe(8)

    // 3. A schema the edge cannot use (remote $ref), pushed into the store by hand: one schema error; forwarded unvalidated.
    await edge.kvPut(toolKey('default', 'public', 'remote'), JSON.stringify({ name: 'remote', inputSchema: { $ref: 'https://example.com/s.json' }, dialect: '2020-12', hash: '0' }))
    expect((await rpc(edge.url, call(30, 'remote', {}))).status).toBe(200)
    // 4. Unknown tools: each one a pull (REFRESH_MIN_INTERVAL_MS 0) until the budget (4 per minute)
    // is spent. nope_1's pull fails, so it is forwarded unvalidated (D16); nope_2 and nope_3 are
    // rejected after their pull; nope_4 and nope_5 find the budget spent, and the last pull (nope_3's)
    // succeeded, so they are rejected on what it learned.
    script.failPull = true
    expect((await rpc(edge.url, call(41, 'nope_1', {}))).json.result.content[0].text).toBe('ok')
    script.failPull = false
    for (const i of [2, 3, 4, 5]) expect((await rpc(edge.url, call(40 + i, `nope_${i}`, {}))).json.error.code).toBe(-32602)
    // 5. An SSE reply, a notification, a batch-free ping.
    const sse = await fetch(edge.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify(call(50, 'streamy', {})),
    })
    expect(await sse.text()).toContain('streamed')
    await rpc(edge.url, { jsonrpc: '2.0', id: 51, method: 'ping' })

    const s3 = await scrape()
    const pulls = countMethod(origin, 'initialize')
    expect(value(s3, 'mcp_edge_registry_refreshes_total')).toBe(pulls)
    expect(pulls).toBe(4) // the first call's pull and three unknown-tool pulls: the budget of 4 is then spent
    expect(value(s3, 'mcp_edge_registry_refresh_failures_total')).toBe(1)
    expect(value(s3, 'mcp_edge_registry_refreshes_refused_total')).toBe(2) // nope_4 and nope_5
    expect(value(s3, 'mcp_edge_registry_schema_errors_total')).toBe(1)

    // Request counts by method and grade, and per tool.
    expect(value(s3, 'mcp_edge_requests_total', { origin: 'default', method: 'tools/call', grade: 'ok' })).toBe(7) // 6 weather + streamy
    expect(value(s3, 'mcp_edge_requests_total', { method: 'tools/call', grade: 'rejected' })).toBe(3 + 4)
    expect(value(s3, 'mcp_edge_requests_total', { method: 'tools/call', grade: 'unvalidated' })).toBe(2) // remote, nope_1
    expect(value(s3, 'mcp_edge_requests_total', { method: 'ping' })).toBe(1) // the scripted origin answers it 202: graded missing
    expect(value(s3, 'mcp_edge_grades_total', { tool: 'weather', grade: 'ok' })).toBe(6)
    expect(value(s3, 'mcp_edge_grades_total', { tool: 'weather', grade: 'rejected' })).toBe(3)
    expect(value(s3, 'mcp_edge_grades_total', { tool: '_unknown', grade: 'rejected' })).toBe(4)
    // Locally answered vs forwarded POSTs.
    expect(value(s3, 'mcp_edge_posts_total', { answered_by: 'edge' })).toBe(3 + 4)
    expect(value(s3, 'mcp_edge_posts_total', { answered_by: 'origin' })).toBe(6 + 2 + 1 + 1)

    // The histograms: every POST in the edge-added one, every forwarded one in the origin one;
    // buckets are cumulative and move. (parse-prometheus-text-format keeps a labelled histogram's
    // buckets but drops its _sum and _count samples, so those are read from the text; one origin here.)
    const buckets = (fams: Record<string, Family> | undefined, metric: string) => fams?.[metric]?.metrics[0]?.buckets ?? {}
    const edgeB = buckets(s3, 'mcp_edge_added_latency_seconds')
    const les = Object.keys(edgeB).sort((a, b) => Number(a.replace('+Inf', 'Infinity')) - Number(b.replace('+Inf', 'Infinity')))
    expect(les).toEqual(['0.000025', '0.00005', '0.0001', '0.00025', '0.0005', '0.001', '0.0025', '0.005', '0.01', '0.025', '0.1', '1', '+Inf'])
    expect(Number(edgeB['+Inf'])).toBe(17)
    const counts = les.map((le) => Number(edgeB[le]))
    expect(counts).toEqual([...counts].sort((a, b) => a - b))
    expect(Number(edgeB['1'])).toBeGreaterThan(Number(buckets(before, 'mcp_edge_added_latency_seconds')['1'] ?? 0))
    const originB = buckets(s3, 'mcp_edge_origin_latency_seconds')
    expect(Number(originB['+Inf'])).toBe(10)
    expect(Number(originB['10'])).toBe(10)
    const text = await scrapeText()
    expect(text).toMatch(/^mcp_edge_added_latency_seconds_count\{origin="default"\} 17$/m)
    expect(Number(/^mcp_edge_origin_latency_seconds_sum\{origin="default"\} (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0)

    // Bytes.
    expect(value(s3, 'mcp_edge_request_bytes_total', { origin: 'default' })).toBeGreaterThan(17 * 60)
    expect(value(s3, 'mcp_edge_response_bytes_total', { origin: 'default' })).toBeGreaterThan(17 * 40)
    if (name === 'node') {
      // prom-client's process and event-loop metrics.
      expect(s3.process_cpu_seconds_total?.type).toBe('COUNTER')
      expect(s3.nodejs_eventloop_lag_seconds?.type).toBe('GAUGE')
    }
  })

  it('counts an open SSE stream while it is open', async () => {
    const ac = new AbortController()
    const res = await fetch(edge.url, { headers: { accept: 'text/event-stream', 'mcp-protocol-version': '2025-06-18' }, signal: ac.signal })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    await reader.read()
    expect(value(await scrape(), 'mcp_edge_open_sse_streams', { origin: 'default' })).toBe(1)
    ac.abort()
    held?.end()
    await eventually(async () => value(await scrape(), 'mcp_edge_open_sse_streams', { origin: 'default' }) === 0)
  })

  it('promtool check metrics accepts the text', async () => {
    if (PROMTOOL === undefined || !existsSync(PROMTOOL)) throw new Error(missingMessage('promtool'))
    const text = await scrapeText()
    const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' })
    const problems = (r.stdout + r.stderr).split('\n').filter(Boolean)
    // prom-client's own default gauges nodejs_active_{handles,requests,resources}_total break the
    // "_total is for counters" lint; they are prom-client's names, not the edge's. Nothing else may be reported.
    const PROM_CLIENT_OWN = /^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/
    expect(problems.filter((p) => !PROM_CLIENT_OWN.test(p))).toEqual([])
    if (name === 'worker') expect(r.status).toBe(0)
    // And with those three left out, the text is clean by promtool's exit code too.
    const own = text
      .split('\n')
      .filter((l) => !/^(# (HELP|TYPE) )?nodejs_active_(handles|requests|resources)_total\b/.test(l))
      .join('\n')
    const r2 = spawnSync(PROMTOOL, ['check', 'metrics'], { input: own, encoding: 'utf8' })
    expect(r2.stdout + r2.stderr).toBe('')
    expect(r2.status).toBe(0)
  })
})
