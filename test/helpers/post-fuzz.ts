/**
 * The property-based fuzz of the whole `POST /mcp` path (docs/reliability.md), shared by
 * test/reliability/post-fuzz.test.ts (a seeded short run) and scripts/fuzz.ts (`npm run fuzz`, long runs).
 *
 * One case is a request body (arbitrary bytes or JSON, near-valid JSON-RPC, 2025-03-26 batches,
 * `__proto__` keys, lone surrogates, a BOM, huge strings, nesting near MAX_JSON_DEPTH), request
 * headers (every protocol version, Accept, Content-Type, Mcp-Method/Mcp-Name, Authorization) and
 * an origin behaviour for that request (healthy JSON or SSE, or a fault: refused, reset, timeout,
 * 5xx, HTML, truncated JSON or SSE, wrong or repeated ids, result with error, ...). The origin
 * behaviour travels to the origin in the `x-fuzz-origin` request header, which the edge forwards
 * like any other end-to-end header, so cases can run concurrently.
 *
 * Three targets answer cases: `inprocess` calls `admitPost` + `handlePost` (src/core/pipeline.ts,
 * the one POST entry both runtimes call) with an {@link OriginClient} function answering the
 * scripted replies; `node` and `worker` send the case over real HTTP to the Node edge or the
 * built Worker in workerd (Miniflare), fronting a real scripted HTTP origin on 127.0.0.1.
 *
 * {@link checkAnswer} is the oracle: answered within the time limit; a fitting status; a valid
 * JSON-RPC body (object or non-empty array of responses, or SSE events of JSON-RPC messages), or
 * no body for 202; each id answered at most as often as the request holds it and only ids the
 * request holds; every valid request of a 200 JSON answer answered; no stack trace or library
 * text; no byte of the case's canary (which is placed only in argument values).
 */
import fc from 'fast-check'
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent, request } from 'undici'
import { mcpEdge } from '../../src/adapters/node/node-edge'
import type { ByteSource, EdgeResponse } from '../../src/core/edge-response'
import type { EdgeDeps, OriginTarget } from '../../src/core/exchange'
import { admitPost, handlePost } from '../../src/core/pipeline'
import { OriginReplyTooLargeError, OriginTimeoutError, type OriginClient, type OriginReply } from '../../src/core/ports'
import { MemoryKv } from '../../src/stores/memory-kv'
import { initializeResult } from './initialize-reply'

// ---------------------------------------------------------------- origin behaviours

/** What the scripted origin does with one forwarded POST. */
export const ORIGIN_BEHAVIOURS = [
  'json',
  'sse',
  'refused',
  'reset',
  'timeout',
  'status-500-empty',
  'status-500-rpc',
  'status-503-html',
  'status-400-rpc',
  'html-200',
  'truncated-json',
  'truncated-sse',
  'wrong-ids',
  'repeated-ids',
  'result-and-error',
  'sse-stall',
  'sse-reset',
  'garbage-200',
] as const
export type OriginBehaviour = (typeof ORIGIN_BEHAVIOURS)[number]

/** The tools the scripted origin lists (tools/list). `calc.a` is an integer, `calc.s` at most 8 characters. */
export const FUZZ_TOOLS = [
  { name: 'calc', inputSchema: { type: 'object', properties: { a: { type: 'integer' }, s: { type: 'string', maxLength: 8 } }, required: ['a'], additionalProperties: false } },
  { name: 'free', inputSchema: { type: 'object' } },
]

/** A scripted reply: status, headers and body chunks; `fault` for what a socket does instead. */
export interface ScriptedReply {
  status: number
  headers: Record<string, string>
  chunks: string[]
  /** `refused`/`reset`/`timeout`: no reply; `stall`: write the chunks, then nothing; `cut`: write the chunks, then reset. */
  fault?: 'refused' | 'reset' | 'timeout' | 'stall' | 'cut'
}

function idsOf(json: unknown): { id: unknown; method: string }[] {
  const list = Array.isArray(json) ? json : [json]
  const out: { id: unknown; method: string }[] = []
  for (const m of list)
    if (m && typeof m === 'object' && 'id' in m && typeof (m as { method?: unknown }).method === 'string')
      out.push({ id: (m as { id: unknown }).id, method: (m as { method: string }).method })
  return out
}

function resultFor(method: string, requestedVersion: unknown): unknown {
  if (method === 'initialize')
    return initializeResult(
      {},
      {
        version: typeof requestedVersion === 'string' ? requestedVersion : '2025-06-18',
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: 'fuzz-origin', version: '1.0.0' },
      }
    )
  if (method === 'tools/list') return { tools: FUZZ_TOOLS }
  if (method === 'server/discover') return { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'fuzz-origin', version: '1.0.0' } }
  if (method === 'tools/call') return { content: [{ type: 'text', text: 'ok' }] }
  return {}
}

const JSON_H = { 'content-type': 'application/json' }
const SSE_H = { 'content-type': 'text/event-stream' }

/**
 * The reply the scripted origin gives to one POST body under a behaviour. The edge's own pulls
 * (initialize, tools/list, server/discover) are answered healthily unless the behaviour is a
 * connection fault, so tools are known and calls are validated.
 */
export function scriptReply(bodyText: string, behaviour: OriginBehaviour): ScriptedReply {
  let json: unknown
  try {
    json = JSON.parse(bodyText)
  } catch {
    json = undefined
  }
  const reqs = idsOf(json)
  const isPull = reqs.length === 1 && !Array.isArray(json) && ['initialize', 'tools/list', 'server/discover'].includes(reqs[0]!.method)
  if (behaviour === 'refused' || behaviour === 'reset' || behaviour === 'timeout') return { status: 0, headers: {}, chunks: [], fault: behaviour }
  const answers = reqs.map((r) => ({ jsonrpc: '2.0', id: r.id, result: resultFor(r.method, (json as { params?: { protocolVersion?: unknown } })?.params?.protocolVersion) }))
  const asBody = (msgs: unknown[]) => JSON.stringify(Array.isArray(json) ? msgs : msgs[0])
  if (isPull || behaviour === 'json') {
    if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
    return { status: 200, headers: isPull && reqs[0]!.method === 'initialize' ? { ...JSON_H, 'mcp-session-id': 'fuzz-session' } : JSON_H, chunks: [asBody(answers)] }
  }
  const events = (msgs: unknown[]) => msgs.map((m) => `event: message\ndata: ${JSON.stringify(m)}\n\n`)
  switch (behaviour) {
    case 'sse':
      if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
      return {
        status: 200,
        headers: SSE_H,
        chunks: [
          ': keep-alive\n\n',
          `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } })}\n\n`,
          ...events(answers),
        ],
      }
    case 'status-500-empty':
      return { status: 500, headers: {}, chunks: [] }
    case 'status-500-rpc':
      return { status: 500, headers: JSON_H, chunks: [JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } })] }
    case 'status-503-html':
      return { status: 503, headers: { 'content-type': 'text/html' }, chunks: ['<html><body>Service Unavailable</body></html>'] }
    case 'status-400-rpc':
      return { status: 400, headers: JSON_H, chunks: [JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Bad Request: no valid session' } })] }
    case 'html-200':
      return { status: 200, headers: { 'content-type': 'text/html' }, chunks: ['<!doctype html><title>Login</title>'] }
    case 'garbage-200':
      return { status: 200, headers: JSON_H, chunks: ['\u0000\u00ff{{[[not json'] }
    case 'truncated-json': {
      if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
      const t = asBody(answers)
      return { status: 200, headers: JSON_H, chunks: [t.slice(0, Math.max(1, t.length - 3))] }
    }
    case 'truncated-sse': {
      if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
      const ev = events(answers)
      const last = ev.pop()!
      return { status: 200, headers: SSE_H, chunks: [...ev, last.slice(0, last.length - 6)] }
    }
    case 'wrong-ids':
      if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
      return { status: 200, headers: JSON_H, chunks: [asBody(answers.map((a, i) => ({ ...a, id: `wrong-${i}` })))] }
    case 'repeated-ids':
      if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
      return { status: 200, headers: JSON_H, chunks: [JSON.stringify([...answers, ...answers])] }
    case 'result-and-error':
      if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
      return { status: 200, headers: JSON_H, chunks: [asBody(answers.map((a) => ({ ...a, error: { code: -32603, message: 'both' } })))] }
    case 'sse-stall':
      if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
      return { status: 200, headers: SSE_H, chunks: [': started\n\n'], fault: 'stall' }
    case 'sse-reset':
      if (answers.length === 0) return { status: 202, headers: {}, chunks: [] }
      return { status: 200, headers: SSE_H, chunks: [events(answers)[0]!.slice(0, 20)], fault: 'cut' }
  }
  return { status: 500, headers: {}, chunks: [] }
}

// ---------------------------------------------------------------- cases

/** One fuzz case: the body, the request headers, the origin's behaviour and the canary in argument values. */
export interface FuzzCase {
  body: Uint8Array
  headers: Record<string, string>
  behaviour: OriginBehaviour
  canary: string
  /** A short label of the generator that made the body (for the summary). */
  kind: string
}

const VERSIONS = [undefined, '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28', '2099-01-01', 'banana', '']

/** Mostly `good`, sometimes one of `bad`. */
function mostly<T>(good: T, ...bad: T[]): fc.Arbitrary<T> {
  return fc.oneof({ weight: 9, arbitrary: fc.constant(good) }, { weight: 1, arbitrary: fc.constantFrom(...bad) })
}

/** Values an argument may take; `canary` is embedded into every string. */
function argValue(canary: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: -5, max: 5 }) },
    { weight: 2, arbitrary: fc.constantFrom(1.5, true, null, 1e308) },
    { weight: 4, arbitrary: fc.string({ maxLength: 6 }).map((s) => `${s}${canary}`) },
    { weight: 1, arbitrary: fc.constant(`${canary}\ud800`) },
    { weight: 1, arbitrary: fc.constant({ nested: canary }) },
    { weight: 1, arbitrary: fc.constant([canary, 1]) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 40_000 }).map((n) => canary + 'x'.repeat(n)) },
    { weight: 1, arbitrary: fc.integer({ min: 58, max: 70 }).map((d) => JSON.parse('['.repeat(d) + JSON.stringify(canary) + ']'.repeat(d)) as unknown) }
  )
}

function argsArb(canary: string): fc.Arbitrary<unknown> {
  const v = argValue(canary)
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ a: v, s: v }, { requiredKeys: [] }) },
    { weight: 2, arbitrary: fc.record({ a: fc.integer({ min: -3, max: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ a: v, extra: v }, { requiredKeys: ['extra'] }) },
    { weight: 1, arbitrary: fc.constantFrom(null, 'args', [1, 2]) },
    { weight: 1, arbitrary: v.map((x) => JSON.parse(`{"__proto__":${JSON.stringify(x)},"a":1}`) as unknown) },
    { weight: 1, arbitrary: fc.constant(undefined) }
  )
}

const idArb = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0, max: 50 }) },
  { weight: 6, arbitrary: fc.string({ maxLength: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, 1.5, true, {}, [], -0, 9007199254740993, '__proto__', 'constructor') }
)

function messageArb(canary: string): fc.Arbitrary<Record<string, unknown>> {
  const meta = fc.record(
    { 'io.modelcontextprotocol/protocolVersion': fc.constantFrom(...VERSIONS.filter((v) => v !== undefined)), 'io.modelcontextprotocol/clientCapabilities': fc.constant({}) },
    { requiredKeys: [] }
  )
  const callParams = fc
    .record(
      {
        name: fc.oneof(fc.constantFrom('calc', 'calc', 'free', 'nope'), fc.integer()),
        arguments: argsArb(canary),
        _meta: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: meta }),
      },
      { requiredKeys: ['name'] }
    )
    .map((p) => {
      if (p._meta === undefined) delete p._meta
      return p
    })
  return fc
    .record(
      {
        jsonrpc: mostly<unknown>('2.0', '1.0', 2, undefined),
        id: fc.oneof({ weight: 9, arbitrary: idArb }, { weight: 1, arbitrary: fc.constant(undefined) }),
        method: fc.oneof(
          { weight: 6, arbitrary: fc.constant('tools/call') },
          {
            weight: 3,
            arbitrary: fc.constantFrom(
              'tools/list',
              'initialize',
              'ping',
              'server/discover',
              'resources/read',
              'notifications/initialized',
              'notifications/tools/list_changed',
              'notifications/cancelled',
              'rpc.x',
              ''
            ),
          },
          { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constant(null)) }
        ),
        params: fc.oneof(
          { weight: 6, arbitrary: callParams },
          { weight: 1, arbitrary: fc.constantFrom(undefined, null, [1], 'p', { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'c', version: '1' } }) }
        ),
        result: mostly<unknown>(undefined, {}, null),
        error: mostly<unknown>(undefined, { code: 1, message: 'm' }),
      },
      { requiredKeys: ['jsonrpc', 'method'] }
    )
    .map((m) => {
      const out = m as Record<string, unknown>
      for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k]
      return out
    })
}

/** Small edits of a valid text: a byte dropped, changed, doubled, the text cut, a BOM or a lone surrogate put in. */
const mutation = fc.oneof(
  { weight: 8, arbitrary: fc.constant((t: string) => t) },
  fc.nat().map((n) => (t: string) => t.slice(0, n % (t.length + 1))),
  fc.tuple(fc.nat(), fc.constantFrom('"', '{', '}', '[', ']', ',', ':', '\\', '\u0000', '\ud800', '\udfff', '\ufeff', 'é')).map(([n, c]) => (t: string) => {
    const i = n % (t.length + 1)
    return t.slice(0, i) + c + t.slice(i)
  }),
  fc.nat().map((n) => (t: string) => {
    const i = n % Math.max(1, t.length)
    return t.slice(0, i) + t.slice(i + 1)
  }),
  fc.constant((t: string) => '\ufeff' + t),
  fc.constant((t: string) => t.replace('"2.0"', '"2.0","jsonrpc":"2.0"')),
  fc.constant((t: string) => t.replace(/"a":/, '"\\ud800":'))
)

const enc = new TextEncoder()
const utf8 = new TextDecoder()

function bodyArb(canary: string): fc.Arbitrary<{ body: Uint8Array; kind: string }> {
  const msg = messageArb(canary)
  const text = (kind: string, a: fc.Arbitrary<string>) => a.map((t) => ({ body: enc.encode(t), kind }))
  return fc.oneof(
    {
      weight: 8,
      arbitrary: text(
        'single',
        fc.tuple(msg, mutation).map(([m, f]) => f(JSON.stringify(m)))
      ),
    },
    {
      weight: 4,
      arbitrary: text(
        'batch',
        fc.tuple(fc.array(msg, { minLength: 1, maxLength: 6 }), fc.boolean(), mutation).map(([ms, dup, f]) => f(JSON.stringify(dup && ms.length > 1 ? [...ms, ms[0]] : ms)))
      ),
    },
    { weight: 1, arbitrary: text('empty-batch', fc.constantFrom('[]', '[[]]', '[1,2]', '[null]', '[{}]')) },
    {
      weight: 2,
      arbitrary: text(
        'json',
        fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null')
      ),
    },
    {
      weight: 1,
      arbitrary: text(
        'proto',
        fc.constantFrom(
          '{"__proto__":{"jsonrpc":"2.0","id":1,"method":"ping"}}',
          '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"__proto__":{"name":"calc"},"name":"calc","arguments":{"a":1}}}',
          '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calc","arguments":{"a":1,"constructor":{"prototype":{}}}}}'
        )
      ),
    },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 80 }).map((body) => ({ body, kind: 'bytes' })) },
    { weight: 1, arbitrary: text('string', fc.string({ unit: 'binary', maxLength: 60 })) },
    {
      weight: 1,
      arbitrary: text(
        'deep',
        fc.tuple(fc.integer({ min: 56, max: 72 }), fc.constantFrom('[', '{"a":'), fc.boolean()).map(([d, open, inArgs]) => {
          const close = open === '[' ? ']' : '}'
          const core = open === '[' ? '1' : '1'
          const nested = open.repeat(d) + core + close.repeat(d)
          return inArgs ? `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"free","arguments":{"a":${nested}}}}` : nested
        })
      ),
    },
    {
      weight: 1,
      arbitrary: text(
        'huge',
        fc
          .oneof({ weight: 19, arbitrary: fc.integer({ min: 50_000, max: 200_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 3_000_000, max: 4_300_000 }) })
          .map((n) => `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"calc","arguments":{"a":1,"s":"${canary}${'y'.repeat(n)}"}}}`)
      ),
    }
  )
}

const headersArb = fc.record({
  version: fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(undefined, '2025-03-26', '2025-06-18', '2025-11-25', '2026-07-28') },
    { weight: 1, arbitrary: fc.constantFrom('2099-01-01', 'banana', '') }
  ),
  accept: mostly<string | undefined>('application/json, text/event-stream', 'application/json', 'text/event-stream', '*/*', undefined),
  contentType: mostly<string | undefined>('application/json', 'application/json; charset=utf-8', 'text/plain', undefined),
  /** Mcp-Method / Mcp-Name taken from the body (as a 2026-07-28 client sends them), or random. */
  coherent: fc.boolean(),
  mcpMethod: fc.constantFrom(undefined, undefined, 'tools/call', 'tools/list', 'TOOLS/CALL'),
  mcpName: fc.constantFrom(undefined, undefined, 'calc', 'free', '=?base64?Y2FsYw==?='),
  auth: fc.constantFrom(undefined, undefined, undefined, 'Bearer a', 'Bearer b'),
  session: fc.constantFrom(undefined, undefined, 'fuzz-session'),
})

/** The method and tool name of a body that is one JSON-RPC message, for coherent Mcp-Method / Mcp-Name headers. */
function methodAndName(body: Uint8Array): { method?: string; name?: string } {
  if (body.length > 10_000) return {}
  try {
    const j = JSON.parse(utf8.decode(body)) as { method?: unknown; params?: { name?: unknown } }
    if (!j || typeof j !== 'object' || Array.isArray(j)) return {}
    return { ...(typeof j.method === 'string' ? { method: j.method } : {}), ...(typeof j.params?.name === 'string' ? { name: j.params.name } : {}) }
  } catch {
    return {}
  }
}

const behaviourArb = fc.oneof(
  { weight: 30, arbitrary: fc.constant<OriginBehaviour>('json') },
  { weight: 10, arbitrary: fc.constant<OriginBehaviour>('sse') },
  { weight: 16, arbitrary: fc.constantFrom<OriginBehaviour>(...ORIGIN_BEHAVIOURS.filter((b) => b !== 'json' && b !== 'sse' && b !== 'timeout' && b !== 'sse-stall')) },
  { weight: 1, arbitrary: fc.constantFrom<OriginBehaviour>('timeout', 'sse-stall') }
)

/** The case generator. The canary is per case, made of letters that no answer text of the edge contains. */
export const fuzzCaseArb: fc.Arbitrary<FuzzCase> = fc.tuple(fc.stringMatching(/^[a-z]{6}$/), headersArb, behaviourArb).chain(([tag, h, behaviour]) => {
  const canary = `QZCANARY${tag}`
  return bodyArb(canary).map(({ body, kind }) => {
    const headers: Record<string, string> = { host: '127.0.0.1', 'x-fuzz-origin': behaviour }
    if (h.contentType) headers['content-type'] = h.contentType
    if (h.accept) headers.accept = h.accept
    // A coherent batch is sent as a 2025-03-26 client would (batches exist only there).
    const version = kind === 'batch' && h.coherent ? '2025-03-26' : h.version
    if (version !== undefined) headers['mcp-protocol-version'] = version
    const mn = h.coherent ? methodAndName(body) : { method: h.mcpMethod, name: h.mcpName }
    if (mn.method && /^[\x21-\x7e]+$/.test(mn.method)) headers['mcp-method'] = mn.method
    if (mn.name && /^[\x21-\x7e]+$/.test(mn.name)) headers['mcp-name'] = mn.name
    if (h.auth) headers.authorization = h.auth
    if (h.session) headers['mcp-session-id'] = h.session
    return { body, headers, behaviour, canary, kind }
  })
})

// ---------------------------------------------------------------- the oracle

/** An answer as seen by a client: status, lower-case headers, body text; `ms` from send to the body's end. */
export interface FuzzAnswer {
  status: number
  headers: Record<string, string>
  text: string
  ms: number
}

const STATUSES = new Set([200, 202, 400, 403, 404, 405, 406, 413, 415, 502])
/** Text no answer may hold: stack frames, file positions, exception names, runtime and library names. */
const INTERNALS =
  /\n\s+at |\bat [\w.<>]+ \(|node_modules|\.(?:ts|js|mjs):\d+|\b(?:TypeError|ReferenceError|RangeError|SyntaxError|AggregateError)\b|Unexpected (?:token|end of JSON)|\bundici\b|\bhono\b|\bajv\b|cfworker|workerd|miniflare|Internal error in the edge/i

function idKey(id: unknown): string {
  return typeof id === 'number' ? `n:${id}` : typeof id === 'string' ? `s:${id}` : `x:${JSON.stringify(id)}`
}

/** The ids a body holds as JSON-RPC requests, counted; and the valid requests (which must be answered). */
function requestIds(body: Uint8Array): { counts: Map<string, number>; valid: string[]; parsed: boolean; batch: boolean } {
  const counts = new Map<string, number>()
  const valid: string[] = []
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
  } catch {
    return { counts, valid, parsed: false, batch: false }
  }
  const list = Array.isArray(json) ? json : [json]
  for (const m of list) {
    if (!m || typeof m !== 'object' || Array.isArray(m) || !('id' in m)) continue
    const id = (m as { id: unknown }).id
    const k = idKey(id)
    counts.set(k, (counts.get(k) ?? 0) + 1)
    const mm = m as Record<string, unknown>
    if (
      mm.jsonrpc === '2.0' &&
      typeof mm.method === 'string' &&
      mm.method !== '' &&
      ((typeof id === 'number' && Number.isInteger(id)) || typeof id === 'string') &&
      !('result' in mm) &&
      !('error' in mm)
    )
      valid.push(k)
  }
  return { counts, valid, parsed: true, batch: Array.isArray(json) }
}

function checkResponse(m: unknown): string | null {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return 'an answer element is not an object'
  const r = m as Record<string, unknown>
  if (r.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"'
  if (!('id' in r)) return 'a response without id'
  if (!(r.id === null || typeof r.id === 'string' || typeof r.id === 'number')) return `a response id of type ${typeof r.id}`
  if ('result' in r === 'error' in r) return 'a response with both or neither of result and error'
  if ('error' in r) {
    const e = r.error as Record<string, unknown> | null
    if (!e || typeof e !== 'object' || !Number.isInteger(e.code) || typeof e.message !== 'string') return 'an error object without integer code and string message'
  }
  return null
}

/** The JSON-RPC messages of an SSE body; a data payload that is not JSON is reported. */
function sseMessages(text: string): { msgs: unknown[]; bad?: string } {
  const msgs: unknown[] = []
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
    if (data.length === 0) continue
    try {
      msgs.push(JSON.parse(data.join('\n')))
    } catch {
      return { msgs, bad: 'an SSE event whose data is not JSON' }
    }
  }
  return { msgs }
}

/**
 * The oracle: null when the answer fits the case, else the first rule it breaks (a sentence,
 * never the body: bodies may be megabytes).
 * @param limitMs the time limit of one answer
 */
export function checkAnswer(c: FuzzCase, a: FuzzAnswer, limitMs: number): string | null {
  if (a.ms > limitMs) return `answered in ${a.ms} ms, over the ${limitMs} ms limit`
  // An origin's refusal of a notification is relayed with its status (MCP transports: an HTTP error status, maybe a JSON-RPC error without id).
  const relayed = /^status-(\d{3})-/.exec(c.behaviour)
  if (!STATUSES.has(a.status) && !(relayed && a.status === Number(relayed[1]))) return `status ${a.status}`
  const internal = INTERNALS.exec(a.text)
  // Text the client sent itself (an id "ajV", a method name) is echoed, not leaked.
  if (internal && !utf8.decode(c.body).toLowerCase().includes(internal[0].toLowerCase())) return `internals in the body: ${JSON.stringify(internal[0])}`
  if (a.text.includes(c.canary)) return 'the canary is in the body'
  if (a.status === 202) return a.text === '' ? null : '202 with a body'
  if (a.text === '') return a.status >= 400 && a.status !== 502 ? null : `status ${a.status} with no body`
  const ct = (a.headers['content-type'] ?? '').toLowerCase()
  let msgs: unknown[]
  if (ct.includes('text/event-stream')) {
    const s = sseMessages(a.text)
    if (s.bad) return s.bad
    msgs = s.msgs.filter((m) => !(m && typeof m === 'object' && 'method' in m))
  } else if (ct.includes('application/json')) {
    let j: unknown
    try {
      j = JSON.parse(a.text)
    } catch {
      return 'a JSON body that does not parse'
    }
    if (Array.isArray(j) && j.length === 0) return 'an empty array'
    msgs = Array.isArray(j) ? j : [j]
  } else return `content-type ${JSON.stringify(ct)} with a body`
  for (const m of msgs) {
    const bad = checkResponse(m)
    if (bad) return bad
  }
  const req = requestIds(c.body)
  const seen = new Map<string, number>()
  for (const m of msgs) {
    const id = (m as { id: unknown }).id
    if (id === null) continue
    const k = idKey(id)
    const n = (seen.get(k) ?? 0) + 1
    seen.set(k, n)
    if (!req.counts.has(k)) return 'an answer under an id the request does not hold'
    if (n > req.counts.get(k)!) return 'an id answered more often than the request holds it'
  }
  // Lost ids: a 200 JSON answer that answers anything under an id answers every valid request.
  if (a.status === 200 && ct.includes('application/json') && seen.size > 0) {
    for (const k of req.valid) if (!seen.has(k)) return 'a valid request id is not answered'
  }
  return null
}

// ---------------------------------------------------------------- targets

/** Sends cases to one edge. */
export interface FuzzTarget {
  name: string
  /** The time limit of one answer, in ms. */
  limitMs: number
  send(c: FuzzCase): Promise<FuzzAnswer>
  close(): Promise<void>
}

/** The edge variables of every target: short origin and stream bounds so faults end fast. */
export const FUZZ_VARS = {
  ORIGIN_TIMEOUT_MS: '400',
  STREAM_IDLE_MS: '400',
  STREAM_MAX_MS: '2000',
  TOOL_LIST_TIMEOUT_MS: '1000',
  REFRESH_MIN_INTERVAL_MS: '0',
  REFRESH_BUDGET_PER_MIN: '100000',
}

function sourceOf(chunks: string[], fault: ScriptedReply['fault']): ByteSource {
  let i = 0
  let cancelled = false
  return {
    read: () => {
      if (cancelled) return Promise.resolve({ done: true })
      if (i < chunks.length) return Promise.resolve({ done: false as const, value: enc.encode(chunks[i++]!) })
      if (fault === 'cut') return Promise.reject(new Error('other side closed'))
      if (fault === 'stall') return new Promise(() => undefined)
      return Promise.resolve({ done: true })
    },
    cancel: async () => {
      cancelled = true
    },
  }
}

/**
 * The scripted origin port of the in-process target: answers {@link scriptReply} for the
 * behaviour in the `x-fuzz-origin` header, as the undici client would: connection faults reject,
 * a timeout rejects {@link OriginTimeoutError}, a body that stalls rejects it from `text()`.
 */
export const scriptedOriginClient: OriginClient = async (req) => {
  const behaviour = (req.headers['x-fuzz-origin'] ?? 'json') as OriginBehaviour
  if (req.method !== 'POST') return { status: 202, headers: {}, text: async () => '', stream: () => null, discard: () => undefined }
  const r = scriptReply(req.body ?? '', behaviour)
  if (r.fault === 'refused') throw new Error('connect ECONNREFUSED 127.0.0.1:9')
  if (r.fault === 'reset') throw new Error('other side closed')
  if (r.fault === 'timeout') throw new OriginTimeoutError()
  let used = false
  const reply: OriginReply = {
    status: r.status,
    headers: r.headers,
    text: async () => {
      if (used) throw new Error('body used')
      used = true
      if (r.fault === 'cut') throw new Error('other side closed')
      if (r.fault === 'stall') throw new OriginTimeoutError()
      const t = r.chunks.join('')
      if (req.maxReplyBytes !== undefined && t.length > req.maxReplyBytes) throw new OriginReplyTooLargeError()
      return t
    },
    // The origin's bytes, as the real clients give them (the edge relays an unchanged reply as these).
    bytes: async () => new TextEncoder().encode(await reply.text()),
    stream: () => (r.chunks.length || r.fault ? sourceOf(r.chunks, r.fault) : null),
    discard: () => undefined,
  }
  return reply
}

async function readAll(r: EdgeResponse): Promise<string> {
  if (r.body === null) return ''
  if (typeof r.body === 'string') return r.body
  if (r.body instanceof Uint8Array) return Buffer.from(r.body).toString('utf8')
  const parts: Uint8Array[] = []
  for (;;) {
    const x = await r.body.read()
    if (x.done) break
    parts.push(x.value)
  }
  return Buffer.concat(parts).toString('utf8')
}

/** The in-process target: `admitPost` + `handlePost` with the scripted origin port. */
export function inprocessTarget(vars: Record<string, string> = {}): FuzzTarget {
  // The Node build's ports (tiered cfworker/ajv engine), the scripted origin port, an in-memory store.
  const deps: EdgeDeps = mcpEdge({
    env: { ORIGIN_URL: 'http://origin.test/mcp', ...FUZZ_VARS, ...vars },
    store: new MemoryKv(),
    originClient: scriptedOriginClient,
    logger: () => undefined,
  }).deps!
  const config = deps.config
  const target: OriginTarget = { id: 'default', url: config.originUrl }
  return {
    name: 'inprocess',
    limitMs: 3_000,
    async send(c) {
      const t0 = Date.now()
      const headers = new Headers(c.headers)
      const res = admitPost(headers, target, deps, c.body.length) ?? (await handlePost(c.body, headers, target, deps))
      const text = await readAll(res)
      return { status: res.status, headers: res.headers, text, ms: Date.now() - t0 }
    },
    close: async () => undefined,
  }
}

/** A real HTTP origin on 127.0.0.1 answering {@link scriptReply}; counts open sockets. */
export interface FuzzOrigin {
  url: string
  /** Sockets open now. */
  sockets(): number
  close(): Promise<void>
}

/** Starts the scripted HTTP origin of the `node` and `worker` targets. */
export async function startFuzzOrigin(): Promise<FuzzOrigin> {
  let open = 0
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (d: Buffer) => chunks.push(d))
    req.on('error', () => undefined)
    req.on('end', () => {
      const behaviour = String(req.headers['x-fuzz-origin'] ?? 'json') as OriginBehaviour
      if (req.method !== 'POST') return void res.writeHead(202).end()
      const r = scriptReply(Buffer.concat(chunks).toString('utf8'), behaviour)
      if (r.fault === 'refused' || r.fault === 'reset') return void req.socket.destroy()
      if (r.fault === 'timeout') return // never answers; the edge gives up at ORIGIN_TIMEOUT_MS
      res.writeHead(r.status, r.headers)
      for (const ch of r.chunks) res.write(ch)
      if (r.fault === 'cut') return void setTimeout(() => req.socket.destroy(), 5)
      if (r.fault !== 'stall') res.end()
    })
  })
  server.on('connection', (s) => {
    open++
    s.on('close', () => open--)
  })
  server.keepAliveTimeout = 2_000
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    sockets: () => open,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
    },
  }
}

/**
 * Sends a body larger than MAX_BODY_BYTES with node:http and `Expect: 100-continue`: the edge
 * answers 413 from the Content-Length, and workerd (Miniflare) then closes the connection while
 * the body is still arriving, so a client that sends the body at once gets a reset instead of the
 * answer (undici: write ECONNRESET; curl, which waits for the 100, shows the 413).
 */
function earlyAnswer(url: string, headers: Record<string, string>, body: Uint8Array): Promise<Omit<FuzzAnswer, 'ms'>> {
  return new Promise((resolve, reject) => {
    // `Expect: 100-continue`, as curl sends for large bodies: the body goes only after the server's 100.
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length), expect: '100-continue' }, agent: false })
    req.on('continue', () => req.end(body))
    req.on('response', (res) => {
      const parts: Buffer[] = []
      res.on('data', (d: Buffer) => parts.push(d))
      res.on('error', () => undefined)
      res.on('end', () => {
        const h: Record<string, string> = {}
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h[k] = v
        resolve({ status: res.statusCode ?? 0, headers: h, text: Buffer.concat(parts).toString('utf8') })
        req.destroy()
      })
    })
    req.on('error', (e) => setTimeout(() => reject(e), 100))
  })
}

/** An HTTP target: the cases go to `url` (an edge's MCP endpoint) with undici. */
export function httpTarget(name: string, url: string, close: () => Promise<void>, opts: { freshConnections?: boolean } = {}): FuzzTarget {
  const agent = new Agent({ connections: 32, headersTimeout: 10_000, bodyTimeout: 10_000 })
  return {
    name,
    limitMs: 6_000,
    async send(c) {
      const t0 = Date.now()
      const { host: _host, ...headers } = c.headers
      if (c.body.length > 4 * 1024 * 1024) return { ...(await earlyAnswer(url, headers, c.body)), ms: Date.now() - t0 }
      const r = await request(url, { method: 'POST', headers, body: c.body, dispatcher: agent, reset: opts.freshConnections === true })
      const text = await r.body.text()
      const h: Record<string, string> = {}
      for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') h[k] = v
      return { status: r.statusCode, headers: h, text, ms: Date.now() - t0 }
    },
    close: async () => {
      await agent.close()
      await close()
    },
  }
}

/** Result of {@link runFuzz}. */
export interface FuzzSummary {
  target: string
  seed: number
  cases: number
  failures: { index: number; reason: string; kind: string; behaviour: string; body: string; headers: Record<string, string> }[]
  ms: number
  /** Cases per body generator. */
  kinds: Record<string, number>
  /**
   * Cases answered correctly but over the time limit while others ran (a loaded machine), then
   * sent again alone: each was a failure only if it was late again.
   */
  lateRetried: number
}

/**
 * Cases drawn at once. `fc.sample` is synchronous: a large draw blocked the event loop for seconds
 * on a loaded machine (load average 19 on 2 cores), the HTTP client could not see the edge close
 * its idle kept-alive connections (KEEP_ALIVE_TIMEOUT_MS), and the next 8 requests were sent on
 * closed sockets (ECONNRESET; one run of 100,000 at draws of 2,000).
 */
const CASES_PER_DRAW = 200

/** Case `index` of a run from `seed` (as {@link runFuzz} draws it): to replay a failure as a fixed test. */
export function fuzzCaseAt(seed: number, index: number): FuzzCase {
  const batchSize = CASES_PER_DRAW
  return fc.sample(fuzzCaseArb, { seed: seed + Math.floor(index / batchSize), numRuns: (index % batchSize) + 1 })[index % batchSize]!
}

/**
 * Runs `cases` cases from `seed` against a target, `concurrency` at a time, calling `progress`
 * after each 1% (or 1,000 cases). A case that throws (the request failed) is a failure too; a
 * correct answer over the time limit is sent again alone after its batch, and fails if late again.
 * Failures keep the case (body as a JSON string of at most 300 characters) for a fixed test.
 */
export async function runFuzz(
  target: FuzzTarget,
  opts: {
    cases: number
    seed: number
    concurrency?: number
    progress?: (done: number, failures: number, ms: number) => void
    onFailure?: (f: FuzzSummary['failures'][number]) => void
    maxFailures?: number
  }
): Promise<FuzzSummary> {
  const t0 = Date.now()
  const summary: FuzzSummary = { target: target.name, seed: opts.seed, cases: 0, failures: [], ms: 0, kinds: {}, lateRetried: 0 }
  const step = Math.max(1_000, Math.floor(opts.cases / 100))
  const batchSize = CASES_PER_DRAW
  let index = 0
  // fc.sample draws from one seeded generator per batch: case i of a run depends only on (seed, i).
  while (index < opts.cases && summary.failures.length < (opts.maxFailures ?? 20)) {
    const n = Math.min(batchSize, opts.cases - index)
    const batch = fc.sample(fuzzCaseArb, { seed: opts.seed + Math.floor(index / batchSize), numRuns: n })
    let next = 0
    const late: { i: number; c: FuzzCase }[] = []
    const fail = (i: number, c: FuzzCase, reason: string) => {
      const f = { index: index + i, reason, kind: c.kind, behaviour: c.behaviour, body: JSON.stringify(utf8.decode(c.body)).slice(0, 300), headers: c.headers }
      summary.failures.push(f)
      opts.onFailure?.(f)
    }
    const worker = async () => {
      while (next < batch.length) {
        const i = next++
        const c = batch[i]!
        summary.kinds[c.kind] = (summary.kinds[c.kind] ?? 0) + 1
        let reason: string | null
        try {
          const a = await target.send(c)
          reason = checkAnswer(c, a, target.limitMs)
          // Over the limit only: sent again alone below, to tell a hang from a loaded machine.
          if (reason && a.ms > target.limitMs && checkAnswer(c, { ...a, ms: 0 }, target.limitMs) === null) {
            late.push({ i, c })
            reason = null
          }
        } catch (e) {
          reason = `the request failed: ${e instanceof Error ? e.message : String(e)}`
        }
        if (reason) fail(i, c, reason)
        summary.cases++
        if (summary.cases % step === 0) opts.progress?.(summary.cases, summary.failures.length, Date.now() - t0)
      }
    }
    await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker))
    for (const { i, c } of late) {
      summary.lateRetried++
      try {
        const reason = checkAnswer(c, await target.send(c), target.limitMs)
        if (reason) fail(i, c, `${reason} (also when sent alone)`)
      } catch (e) {
        fail(i, c, `the request failed: ${e instanceof Error ? e.message : String(e)}`)
      }
    }
    index += n
  }
  summary.ms = Date.now() - t0
  return summary
}
