/**
 * @module core/forwarding/tool-list-pull
 * The edge's own MCP client session to an origin, used to pull the tool list (D7, docs/design.md
 * §7): `initialize` and `notifications/initialized` where the era has them, every
 * `tools/list` page (following `nextCursor`), then `DELETE` of the session. Replies may be JSON or
 * SSE. Throws on any failure (a {@link PullError} for a failed step); callers fail open (D16).
 */
import { hasVersionHeader, isModern, META_VERSION_KEY, type ProtocolVersion, isKnownVersion } from '../jsonrpc/versions'
import { isObject, requestMessage } from '../jsonrpc/jsonrpc'
import { OriginTimeoutError, type OriginClient, type OriginReply } from '../ports'
import { LinkSignal } from '../client-signal'
import { readSseEvents } from '../sse/read-sse-events'
import { DEFAULT_MAX_JSON_DEPTH, nestsDeeperThan } from '../jsonrpc/json-scan'
import { PullError } from '../errors'

/** Where to pull from and with which caller headers (e.g. `authorization`). */
export interface PullOptions {
  client: OriginClient
  url: string
  era: ProtocolVersion
  /** Caller headers to carry (lower-case names), e.g. authorization. */
  headers: Record<string, string>
  /** Per-request bound (headers, or silence on a body), in ms: `ORIGIN_TIMEOUT_MS`. */
  timeoutMs: number
  /**
   * Overall deadline of the whole pull (initialize, every page, each body read to its end), in ms
   * (`TOOL_LIST_TIMEOUT_MS`). Past it every request of the pull is aborted and the pull rejects
   * with {@link OriginTimeoutError}. Unset: only the per-request bound.
   */
  deadlineMs?: number
  /** Upper bound of each JSON reply body in bytes (`MAX_REPLY_BYTES`); unset: unbounded. */
  maxReplyBytes?: number
  /** Upper bound of pages followed. */
  maxPages?: number
  /** Deepest nesting of arrays and objects accepted in a reply (`MAX_JSON_DEPTH`); default 64. */
  maxJsonDepth?: number
}

const ACCEPT = 'application/json, text/event-stream'

/**
 * Reads the JSON-RPC response with `id` from a JSON or SSE reply; a reply (or SSE event) nesting
 * deeper than `maxDepth` is not parsed. Throws when there is none.
 */
export async function readRpcResponse(reply: OriginReply, id: number, maxDepth = DEFAULT_MAX_JSON_DEPTH): Promise<Record<string, unknown>> {
  const ct = reply.headers['content-type'] ?? ''
  if (ct.includes('text/event-stream')) {
    const body = reply.stream()
    if (!body) throw new PullError('empty-stream')
    for await (const ev of readSseEvents(body)) {
      if (!ev.data) continue
      if (nestsDeeperThan(ev.data, maxDepth)) continue
      let msg: unknown
      try {
        msg = JSON.parse(ev.data)
      } catch {
        continue
      }
      if (isObject(msg) && msg.id === id) return msg
    }
    throw new PullError('stream-ended')
  }
  const text = await reply.text()
  if (nestsDeeperThan(text, maxDepth)) throw new PullError('nests-too-deep')
  const msg: unknown = JSON.parse(text)
  if (isObject(msg) && msg.id === id) return msg
  throw new PullError('no-response')
}

/**
 * Pulls the whole tool list.
 * @returns the tools (all pages), the era spoken and the origin's `ttlMs` hint if any
 * @throws on network failure, a non-2xx status, a JSON-RPC error or a malformed result
 */
export async function pullToolList(opts: PullOptions): Promise<PulledToolList> {
  if (opts.deadlineMs === undefined) return pullWithin(opts)
  // Why an overall deadline: each request's own timeout only bounds silence, so an origin that
  // answers tools/list as an SSE stream writing a byte a second held the single-flight pull, and
  // every call waiting behind it, forever (docs/reliability.md).
  const deadline = new LinkSignal()
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      deadline.abort()
      reject(new OriginTimeoutError())
    }, opts.deadlineMs)
  })
  const pulled = pullWithin(opts, deadline)
  pulled.catch(() => undefined)
  try {
    return await Promise.race([pulled, expired])
  } finally {
    clearTimeout(timer)
  }
}

/** What {@link pullToolList} gives: the tools (all pages), the era spoken, the origin's hints. */
export interface PulledToolList {
  tools: unknown[]
  era: ProtocolVersion
  ttlMs?: number
  cacheScope?: unknown
}

/** {@link pullToolList} without its deadline; `signal` aborts every request of the pull. */
async function pullWithin(opts: PullOptions, signal?: LinkSignal): Promise<PulledToolList> {
  const base: Record<string, string> = { ...opts.headers, 'content-type': 'application/json', accept: ACCEPT }
  let era = opts.era
  let sessionId: string | undefined
  let nextId = 1
  const post = async (body: Record<string, unknown>, expectReply: boolean) => {
    const headers = { ...base }
    if (sessionId) headers['mcp-session-id'] = sessionId
    if (hasVersionHeader(era) || sessionId) headers['mcp-protocol-version'] = era
    if (isModern(era) && typeof body.method === 'string') headers['mcp-method'] = body.method
    if (signal?.aborted) throw new OriginTimeoutError()
    const reply = await opts.client({
      method: 'POST',
      url: opts.url,
      headers,
      body: JSON.stringify(body),
      timeoutMs: opts.timeoutMs,
      ...(signal ? { signal } : {}),
      ...(opts.maxReplyBytes !== undefined ? { maxReplyBytes: opts.maxReplyBytes } : {}),
    })
    if (reply.status < 200 || reply.status > 299) {
      reply.discard()
      throw new PullError('status', reply.status)
    }
    if (!expectReply) {
      reply.discard()
      return undefined
    }
    return reply
  }
  try {
    if (!isModern(era)) {
      const id = nextId++
      const reply = await post(requestMessage('initialize', { protocolVersion: era, capabilities: {}, clientInfo: { name: 'mcp-edge-validator', version: '0.1.0' } }, id), true)
      sessionId = reply!.headers['mcp-session-id'] || undefined
      const init = await readRpcResponse(reply!, id, opts.maxJsonDepth)
      if (!isObject(init.result)) throw new PullError('initialize')
      const v = init.result.protocolVersion
      if (isKnownVersion(v)) era = v
      await post(requestMessage('notifications/initialized'), false)
    }
    const tools: unknown[] = []
    let cursor: string | undefined
    const seen = new Set<string>()
    let ttlMs: number | undefined
    // The pages' cacheScope (docs/protocol-rules.md M40: the same on every page); pages that disagree read as private.
    let cacheScope: unknown
    for (let page = 0; page < (opts.maxPages ?? 100); page++) {
      const id = nextId++
      const params: Record<string, unknown> = cursor ? { cursor } : {}
      // 2026-07-28 envelope: version and client capabilities are required on every request (MCP 2026-07-28 Basic §_meta).
      if (isModern(era))
        params._meta = {
          [META_VERSION_KEY]: era,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'mcp-edge-validator', version: '0.1.0' },
        }
      const reply = await post(requestMessage('tools/list', params, id), true)
      const msg = await readRpcResponse(reply!, id, opts.maxJsonDepth)
      const result = msg.result
      if (!isObject(result) || !Array.isArray(result.tools)) throw new PullError('tools-list')
      tools.push(...result.tools)
      if (typeof result.ttlMs === 'number') ttlMs = result.ttlMs
      if (page > 0 && cacheScope !== result.cacheScope) cacheScope = 'private'
      else cacheScope = result.cacheScope
      if (typeof result.nextCursor !== 'string' || result.nextCursor === '') break
      // A cursor seen before would loop: the list is taken as it stands.
      if (seen.has(result.nextCursor)) break
      seen.add(result.nextCursor)
      cursor = result.nextCursor
    }
    return { tools, era, ...(ttlMs !== undefined ? { ttlMs } : {}), ...(cacheScope !== undefined ? { cacheScope } : {}) }
  } finally {
    if (sessionId) {
      const headers = { ...opts.headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': era }
      opts.client({ method: 'DELETE', url: opts.url, headers, timeoutMs: opts.timeoutMs }).then(
        (r) => r.discard(),
        () => undefined
      )
    }
  }
}
