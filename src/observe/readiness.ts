/**
 * @module observe/readiness
 * Readiness for `GET /readyz` (docs/observability.md): every configured origin's MCP endpoint
 * answers `initialize` within {@link READY_TIMEOUT_MS}, and the tool schema store answers a read.
 * "Answers" means a JSON-RPC response (a result, or an error such as a version it refuses), an
 * SSE stream, or a demand for credentials (401/403: the edge forwards each client's
 * `Authorization`), except when the probe sent the edge's own credential (ORIGIN_AUTHORIZATION, as
 * the edge's tool-list pull does): then a 401/403 is that credential refused, and not ready; a 404 page or any other body that is not JSON-RPC is the endpoint not being
 * there (a typo in the path of `ORIGIN_URL`: before, any status below 500 counted as ready while
 * every call got -31001). With auth on and `AUTH_JWKS_URL`, the issuer's key set must be readable
 * too (check `jwks`: a wrong URL otherwise looked ready while every request got 503); it is read
 * only when the edge holds no fresh keys, and at most once per `AUTH_JWKS_COOLDOWN_MS` after a
 * failed read. The verdict is computed at most once per {@link READY_CACHE_MS} per
 * process or isolate, and concurrent probes share one computation, so a storm of probes reaches
 * each origin about once per interval; a session the origin opens for the probe is ended with
 * DELETE. Runtime-neutral: it uses the origin client and KV ports only.
 */
import type { EdgeDeps } from '../core/exchange'
import { originCause } from '../core/observe/origin-cause'
import { isObject, requestMessage } from '../core/jsonrpc/jsonrpc'
import { isModern, type ProtocolVersion } from '../core/jsonrpc/versions'
import { LinkSignal } from '../core/client-signal'
import { OriginReplyTooLargeError, OriginTimeoutError } from '../core/ports'
import { redactUrl } from '../core/redact-url'
import { edgeOriginCredential } from '../core/call-context'

/** Longest wait for one origin's answer, headers and body, in ms (bounded by ORIGIN_TIMEOUT_MS too). */
export const READY_TIMEOUT_MS = 2000
/** How long a verdict is reused, in ms: the origins see one `initialize` per interval, whatever the probe rate. */
export const READY_CACHE_MS = 2000
/** Upper bound of the `initialize` answer read, in bytes (an InitializeResult is a few hundred). */
export const READY_MAX_REPLY_BYTES = 262_144

/** The verdict: `checks` names each origin (`origin:<name>`), the store and the key set (`jwks`, with AUTH_JWKS_URL), `ok` or why not. */
export interface ReadyReport {
  ready: boolean
  checks: Record<string, string>
}

/** The version the probe's `initialize` offers: the newest supported one that has `initialize` (2026-07-28 has none). */
function probeVersion(supported: readonly ProtocolVersion[]): ProtocolVersion {
  return [...supported].filter((v) => !isModern(v)).sort((a, b) => (a < b ? 1 : -1))[0] ?? '2025-06-18'
}

/**
 * Whether an answer to `initialize` comes from an MCP endpoint: `ok`, or why not (one line,
 * without the URL: /readyz answers it to anyone past the Host check).
 * @param text the body (JSON answers only), null when it was not read
 * @param credentialSent whether the probe carried ORIGIN_AUTHORIZATION (a 401/403 is then not ready)
 */
export function judgeInitializeAnswer(status: number, contentType: string, text: string | null, credentialSent = false): string {
  const essence = contentType.split(';')[0]!.trim().toLowerCase()
  // Without a credential of the edge's own, a demand for one is the endpoint answering (each client's
  // Authorization goes through); with ORIGIN_AUTHORIZATION sent, it is that credential refused, and
  // every request would fail the same way.
  if ((status === 401 || status === 403) && credentialSent) return `answered HTTP ${status} to initialize with ORIGIN_AUTHORIZATION: the origin refuses the edge's credential`
  if (status === 401 || status === 403) return 'ok'
  if (status >= 500) return `answered HTTP ${status}`
  if (status >= 200 && status < 300 && essence === 'text/event-stream') return 'ok'
  if (text !== null && isJsonRpcResponse(text)) return 'ok'
  return `answered HTTP ${status}${essence ? ` (${essence.slice(0, 40)})` : ''} to initialize, not a JSON-RPC response: is the path of the URL right?`
}

function isJsonRpcResponse(text: string): boolean {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return false
  }
  const one = (m: unknown) => isObject(m) && m.jsonrpc === '2.0' && ('result' in m || 'error' in m)
  return Array.isArray(v) ? v.some(one) : one(v)
}

async function probeOrigin(deps: EdgeDeps, url: string): Promise<string> {
  const version = probeVersion(deps.config.supportedVersions)
  const timeoutMs = Math.min(READY_TIMEOUT_MS, deps.config.originTimeoutMs)
  // One deadline for headers and body together: a body trickling a byte at a time must not hold /readyz.
  const signal = new LinkSignal()
  const timer = setTimeout(() => signal.abort(), timeoutMs)
  // The credential the edge's own pull sends (core/call-context.ts), so a refused one shows here.
  const credential = edgeOriginCredential(deps)
  try {
    const reply = await deps.origin({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(credential ? { authorization: credential } : {}) },
      body: JSON.stringify(requestMessage('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'mcp-edge-readyz', version: '1' } }, 'mcp-edge-readyz')),
      timeoutMs,
      signal,
      maxReplyBytes: READY_MAX_REPLY_BYTES,
    })
    const contentType = reply.headers['content-type'] ?? ''
    const sid = reply.headers['mcp-session-id']
    let text: string | null = null
    if (contentType.toLowerCase().includes('json')) {
      try {
        text = await reply.text()
      } catch (e) {
        if (e instanceof OriginReplyTooLargeError) return 'ok' // a JSON answer of that size is not a 404 page
        throw e
      }
    } else reply.discard()
    if (sid) endSession(deps, url, sid, version)
    return judgeInitializeAnswer(reply.status, contentType, text, credential !== null)
  } catch (e) {
    if (signal.aborted || e instanceof OriginTimeoutError) return `unreachable: no answer to initialize within ${timeoutMs} ms`
    const c = originCause(e)
    return `unreachable: ${c.code} (${c.text})`
  } finally {
    clearTimeout(timer)
  }
}

/** Ends the session the probe's `initialize` opened (in the background, bounded like the probe). */
function endSession(deps: EdgeDeps, url: string, sessionId: string, version: ProtocolVersion): void {
  const credential = edgeOriginCredential(deps)
  const headers: Record<string, string> = { 'mcp-session-id': sessionId, 'mcp-protocol-version': version }
  if (credential) headers.authorization = credential
  const done = deps.origin({ method: 'DELETE', url, headers, timeoutMs: READY_TIMEOUT_MS }).then(
    (r) => r.discard(),
    () => undefined
  )
  deps.defer(done)
}

/** Each configured origin: its check name, the variable it comes from, and its URL. */
function originsOf(deps: EdgeDeps): { check: string; variable: string; url: string }[] {
  const out: { check: string; variable: string; url: string }[] = []
  if (deps.config.originUrl) out.push({ check: 'origin:default', variable: 'ORIGIN_URL', url: deps.config.originUrl })
  for (const [name, o] of Object.entries(deps.config.origins)) out.push({ check: `origin:${name}`, variable: `ORIGINS.${name}`, url: o.url })
  return out
}

async function compute(deps: EdgeDeps): Promise<ReadyReport> {
  const checks: Record<string, string> = {}
  const origins = originsOf(deps)
  const results = await Promise.all([
    ...origins.map((o) => probeOrigin(deps, o.url)),
    // A missing binding (Workers) throws at the call itself: read inside the promise chain.
    Promise.resolve()
      .then(() => deps.registry.kv.get('readyz:probe'))
      .then(
        () => 'ok',
        () => 'unreadable: the tool schema store failed a read'
      ),
    ...(deps.auth?.keys ? [deps.auth.keys.check()] : []),
  ])
  origins.forEach((o, i) => (checks[o.check] = results[i]!))
  checks.store = results[origins.length]!
  if (deps.auth?.keys) checks.jwks = results[origins.length + 1]!
  return { ready: Object.values(checks).every((v) => v === 'ok'), checks }
}

/** One origin that is not ready: its variable, its URL with credentials hidden (core/redact-url.ts), and what it answered. */
export interface UnreadyOrigin {
  variable: string
  url: string
  answered: string
}

/**
 * The origins of a verdict that are not ready, for logs and a start-up warning (never for
 * /readyz, which does not show URLs), e.g. `{ variable: 'ORIGIN_URL', url: 'http://127.0.0.1:3000/mpc',
 * answered: 'answered HTTP 404 (text/html) to initialize, not a JSON-RPC response: is the path of the URL right?' }`.
 */
export function unreadyOrigins(deps: EdgeDeps, report: ReadyReport): UnreadyOrigin[] {
  return originsOf(deps)
    .filter((o) => report.checks[o.check] !== undefined && report.checks[o.check] !== 'ok')
    .map((o) => ({ variable: o.variable, url: redactUrl(o.url), answered: report.checks[o.check]! }))
}

/**
 * What is not ready and names a URL, for logs and the start-up warning (never for /readyz):
 * {@link unreadyOrigins}, then the key set (`{ variable: 'AUTH_JWKS_URL', url, answered: 'answered HTTP 404' }`)
 * when its check failed.
 */
export function unreadySources(deps: EdgeDeps, report: ReadyReport): UnreadyOrigin[] {
  const out = unreadyOrigins(deps, report)
  const keys = deps.auth?.keys
  const jwks = report.checks.jwks
  if (keys && jwks !== undefined && jwks !== 'ok') out.push({ variable: keys.variable, url: keys.url, answered: jwks })
  return out
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
    if (!before || before.ready !== report.ready) {
      deps.log({ level: report.ready ? 'info' : 'warn', msg: 'edge.readiness', ready: report.ready, checks: report.checks })
      // The log may name the origins (the operator's own URLs, credentials hidden); /readyz does not.
      for (const o of unreadyOrigins(deps, report)) deps.log({ level: 'warn', msg: 'edge.origin_unready', ...o })
      if (deps.auth?.keys && report.checks.jwks !== undefined && report.checks.jwks !== 'ok')
        deps.log({ level: 'warn', msg: 'edge.jwks_unready', variable: deps.auth.keys.variable, url: deps.auth.keys.url, answered: report.checks.jwks })
    }
    return report
  })
  return state.running
}
