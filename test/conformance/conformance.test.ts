/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, every server
 * scenario, through scripts/run-conformance.sh) against the demo origin with its
 * conformance fixtures: directly, through the edge on Node, through the Worker under
 * `wrangler dev`, and through the edge started with `npm start` (no ORIGIN_URL: it starts the demo
 * origin itself). The four runs go at once, each in one process of the suite; a target with
 * failures runs once more on its own (timing tolerances of a few scenarios); every scenario must
 * pass on every target and the printed pass counts must be equal.
 *
 * The runner installs the suite from the npm registry into /tmp on its first run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startNodeEdge, type EdgeUnderTest } from '../helpers/runtimes'
import { runConformanceTargets, startNpmStart, startWranglerDev, type ConformanceRun, type Proc } from '../helpers/peers-procs'

const TARGETS = ['direct', 'node-edge', 'wrangler-dev', 'npm-start'] as const
type Target = (typeof TARGETS)[number]

describe('official conformance suite: direct, through the edge on Node, on wrangler dev, and via npm start', () => {
  let origin: RunningOrigin
  let edge: EdgeUnderTest
  let wrangler: { proc: Proc; url: string }
  let npmStart: { proc: Proc; url: string; originUrl: string }
  const runs = {} as Record<Target, ConformanceRun>

  beforeAll(async () => {
    origin = await startDemoOrigin({ fixtures: true })
    ;[edge, wrangler, npmStart] = await Promise.all([startNodeEdge({ ORIGIN_URL: origin.url }), startWranglerDev(origin.url), startNpmStart()])
    const urls: Record<Target, string> = { direct: origin.url, 'node-edge': edge.url, 'wrangler-dev': wrangler.url, 'npm-start': npmStart.url }
    Object.assign(runs, await runConformanceTargets(urls, origin.url))
  }, 300_000)

  afterAll(async () => {
    await Promise.all([edge?.close(), wrangler?.proc.stop(), npmStart?.proc.stop()])
    await origin?.close()
  })

  it.each(TARGETS)('every server scenario passes on %s', (t) => {
    const r = runs[t]
    expect(r.exitCode, r.output.slice(-3000)).toBe(0)
    // 0.1.16 has 32 server scenarios (30 active, 2 pending); the runner runs all of them.
    expect(Object.keys(r.scenarios)).toHaveLength(32)
    expect(Object.entries(r.scenarios).filter(([, v]) => v === 'FAIL')).toEqual([])
    expect(r.failed).toBe(0)
    expect(r.passed).toBe(32)
  })

  it('prints equal pass counts and the same verdict per scenario on all four targets', () => {
    const counts = TARGETS.map((t) => runs[t].passed)
    expect(new Set(counts).size).toBe(1)
    for (const t of TARGETS) expect(runs[t].scenarios).toEqual(runs.direct.scenarios)
  })

  it('the edge, not the origin, refuses a DNS-rebinding Host before anything is forwarded', async () => {
    const before = origin.stats.posts
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    })
    for (const url of [edge.url, wrangler.url]) {
      // fetch() will not set Host; the runner's scenario does it with raw HTTP, so do the same here.
      const status = await rawPost(url, body, { host: 'evil.example.com', origin: 'http://evil.example.com' })
      expect(status, url).toBe(403)
    }
    expect(origin.stats.posts).toBe(before)
  })
})

/** POSTs with node:http so the Host header can be set; returns the status. */
async function rawPost(url: string, body: string, headers: Record<string, string>): Promise<number> {
  const { request } = await import('node:http')
  const u = new URL(url)
  return new Promise((res, rej) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (r) => {
        r.resume()
        res(r.statusCode ?? 0)
      }
    )
    req.on('error', rej)
    req.end(body)
  })
}
