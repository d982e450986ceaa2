/**
 * @module observe/readiness
 * Readiness for `GET /readyz` (docs/observability.md): every configured origin answers an HTTP
 * request within {@link READY_TIMEOUT_MS} with a status below 500, and the tool schema store
 * answers a read. The verdict is computed at most once per {@link READY_CACHE_MS} per process or
 * isolate, and concurrent probes share one computation, so a storm of probes reaches each origin
 * about once per interval. Runtime-neutral: it uses the origin client and KV ports only.
 */
import type { EdgeDeps } from '../core/exchange'
import { originCause } from '../core/observe/origin-cause'
import { requestMessage } from '../core/jsonrpc/jsonrpc'

/** Longest wait for one origin's answer, in ms (bounded by ORIGIN_TIMEOUT_MS too). */
export const READY_TIMEOUT_MS = 2000
/** How long a verdict is reused, in ms. */
export const READY_CACHE_MS = 2000

/** The verdict: `checks` names each origin (`origin:<name>`) and the store, `ok` or why not. */
export interface ReadyReport {
  ready: boolean
  checks: Record<string, string>
}

/** The probe sent to an origin: a JSON-RPC ping (any HTTP answer below 500 means it is there). */
const PING = JSON.stringify(requestMessage('ping', undefined, 'mcp-edge-readyz'))

async function probeOrigin(deps: EdgeDeps, url: string): Promise<string> {
  try {
    const reply = await deps.origin({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: PING,
      timeoutMs: Math.min(READY_TIMEOUT_MS, deps.config.originTimeoutMs),
      maxReplyBytes: 65536,
    })
    reply.discard()
    return reply.status < 500 ? 'ok' : `answered HTTP ${reply.status}`
  } catch (e) {
    const c = originCause(e)
    return `unreachable: ${c.code} (${c.text})`
  }
}

async function compute(deps: EdgeDeps): Promise<ReadyReport> {
  const checks: Record<string, string> = {}
  const origins: [string, string][] = []
  if (deps.config.originUrl) origins.push(['default', deps.config.originUrl])
  for (const [name, url] of Object.entries(deps.config.origins)) origins.push([name, url])
  const results = await Promise.all([
    ...origins.map(([, url]) => probeOrigin(deps, url)),
    // A missing binding (Workers) throws at the call itself: read inside the promise chain.
    Promise.resolve()
      .then(() => deps.registry.kv.get('readyz:probe'))
      .then(
        () => 'ok',
        () => 'unreadable: the tool schema store failed a read'
      ),
  ])
  origins.forEach(([name], i) => (checks[`origin:${name}`] = results[i]!))
  checks.store = results[origins.length]!
  return { ready: Object.values(checks).every((v) => v === 'ok'), checks }
}

interface Held {
  at: number
  report?: ReadyReport
  running?: Promise<ReadyReport>
}

const held = new WeakMap<EdgeDeps, Held>()

/**
 * The readiness verdict for these ports: the cached one when younger than {@link READY_CACHE_MS},
 * else a fresh one (shared by concurrent callers). A change of verdict is logged
 * (`edge.readiness`, with the checks).
 */
export function readiness(deps: EdgeDeps, now: () => number = Date.now): Promise<ReadyReport> {
  let h = held.get(deps)
  if (!h) held.set(deps, (h = { at: 0 }))
  const state = h
  if (state.report && now() - state.at < READY_CACHE_MS) return Promise.resolve(state.report)
  if (state.running) return state.running
  state.running = compute(deps).then((report) => {
    const before = state.report
    state.report = report
    state.at = now()
    state.running = undefined
    if (!before || before.ready !== report.ready) deps.log({ level: report.ready ? 'info' : 'warn', msg: 'edge.readiness', ready: report.ready, checks: report.checks })
    return report
  })
  return state.running
}
