/**
 * Table-driven harness for the vector files in test/fixtures/vectors (spec-vectors.jsonl,
 * spec-vectors-2026.jsonl, field-cases.jsonl): one real edge per runtime and deployment profile,
 * one real scripted HTTP origin, one named origin per case (`ORIGINS`), so tool caches never leak
 * from one case to the next. The origin answers the edge's own tool-list pulls from the case's
 * `kv_tools`, forwarded traffic from its `origin_stub` (or a generic echo), and records both apart.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { ServerResponse } from 'node:http'
import { request } from 'undici'
import { expect } from 'vitest'
import type { EdgeUnderTest, StartEdge } from '../helpers/runtimes'
import { startScriptedOrigin, type ReceivedRequest, type ScriptedOrigin } from '../helpers/scripted-origin'
import { initializeReply } from '../helpers/initialize-reply'

const VECTORS = resolve(import.meta.dirname, '../fixtures/vectors')

/** One vector row as stored (spec-vectors*.jsonl). */
export interface VectorRow {
  n: number
  name: string
  versions: string[]
  http_method: string
  headers: Record<string, string>
  request_body?: string | null
  request_body_base64?: string | null
  kv_tools?: { name: string; inputSchema: unknown }[] | Record<string, unknown> | null
  origin_stub?: { status: number; headers?: Record<string, string>; body?: unknown } | null
  profile_overrides?: Record<string, unknown> | null
  expected: Expected
  expected_by_version?: Record<string, Partial<Expected>>
}

export interface Expected {
  http_status: number | number[]
  content_type?: string | null
  body: Record<string, unknown>
  forwarded_to_origin?: boolean | string
  forwarded_body?: string
  headers?: Record<string, string>
  response_headers?: Record<string, string>
  response_must_not_include_header?: string
  [k: string]: unknown
}

/** Reads a JSONL file of test/fixtures/vectors. */
export function readVectors<T = VectorRow>(file: string): T[] {
  return readFileSync(resolve(VECTORS, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T)
}

/** One run of a row: the version it runs for, its headers with that version, and what to expect. */
export interface Case {
  label: string
  row: VectorRow
  version: string | null
  headers: Record<string, string>
  expected: Expected
  origin: string
}

/**
 * Expands rows into runs: one per listed version (the `MCP-Protocol-Version` header substituted
 * when the row carries one; `expected_by_version` merged over `expected`), or one run when the
 * row lists no version.
 */
export function expandRows(rows: VectorRow[], prefix: string): Case[] {
  const out: Case[] = []
  for (const row of rows) {
    const versions = row.versions.length ? row.versions : [null]
    for (const v of versions) {
      const headers = { ...row.headers }
      const hk = Object.keys(headers).find((k) => k.toLowerCase() === 'mcp-protocol-version')
      if (v && hk) headers[hk] = headers[hk]!.trim() === headers[hk] ? v : headers[hk]!
      const over = v ? row.expected_by_version?.[v] : undefined
      const expected: Expected = { ...row.expected, ...(over ?? {}) } as Expected
      // A per-version override that refuses the body (4xx) replaces the row's forwarding note.
      if (over && over.forwarded_to_origin === undefined && typeof row.expected.forwarded_to_origin === 'string' && Number(over.http_status) >= 400)
        expected.forwarded_to_origin = false
      out.push({ label: `${row.n} ${row.name}${v ? ' @' + v : ''}`, row, version: v, headers, expected, origin: `${prefix}${row.n}${v ? 'v' + v.replace(/-/g, '') : ''}` })
    }
  }
  return out
}

function toolsOf(row: VectorRow): unknown[] {
  const kv = row.kv_tools
  if (!kv) return []
  if (Array.isArray(kv)) return kv
  return Object.entries(kv).map(([name, inputSchema]) => ({ name, inputSchema }))
}

/** True for the edge's own tool-list traffic (D7): its initialize/tools/list carry its clientInfo or session. */
function isEdgePull(r: ReceivedRequest): boolean {
  if (r.method === 'DELETE' && String(r.headers['mcp-session-id'] ?? '').startsWith('edge-pull-')) return true
  if (String(r.headers['mcp-session-id'] ?? '').startsWith('edge-pull-')) return true
  const j = r.json as { method?: string; params?: { clientInfo?: { name?: string }; _meta?: Record<string, { name?: string }> } } | undefined
  if (!j || Array.isArray(j)) return false
  if (j.method === 'initialize' && j.params?.clientInfo?.name === 'mcp-edge-validator') return true
  if (j.method === 'tools/list' && j.params?._meta?.['io.modelcontextprotocol/clientInfo']?.name === 'mcp-edge-validator') return true
  return false
}

/** A generic origin answer: a result for every request id (JSON), 202 for notifications only. */
function echoAnswer(r: ReceivedRequest, res: ServerResponse): void {
  const msgs = Array.isArray(r.json) ? r.json : [r.json]
  const answers = msgs
    .filter((m): m is { id: unknown; method: string } => typeof m === 'object' && m !== null && 'id' in m && 'method' in m)
    .map((m) => `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{}}`)
  if (!answers.length) return void res.writeHead(202).end()
  res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(r.json) ? `[${answers.join(',')}]` : answers[0])
}

/** A running deployment: one origin, one edge, per-case routing. */
export interface Deployment {
  origin: ScriptedOrigin
  edge: EdgeUnderTest
  /** Requests of the current case that the edge forwarded (pulls excluded). */
  forwarded(): ReceivedRequest[]
  pulls(): ReceivedRequest[]
  setCase(c: Case): void
  close(): Promise<void>
}

/** Starts a scripted origin and an edge with one named origin per case. */
export async function deploy(start: StartEdge, cases: Case[], vars: Record<string, string> = {}): Promise<Deployment> {
  const origin = await startScriptedOrigin()
  let current: Case | null = null
  let pullN = 0
  const origins: Record<string, string> = {}
  for (const c of cases) origins[c.origin] = origin.url
  const edge = await start({ ORIGIN_URL: origin.url, ORIGINS: JSON.stringify(origins), REFRESH_MIN_INTERVAL_MS: '0', ...vars })
  origin.handle((r, res) => {
    const row = current?.row
    if (isEdgePull(r)) {
      const j = r.json as { id?: number; method?: string; params?: { protocolVersion?: string } } | undefined
      if (r.method === 'DELETE' || j?.method === 'notifications/initialized') return void res.writeHead(202).end()
      if (j?.method === 'initialize') {
        const sid = `edge-pull-${++pullN}`
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': sid })
        return void res.end(JSON.stringify(initializeReply(j, { echo: '2025-03-26', serverInfo: { name: 'scripted', version: '1' } })))
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      return void res.end(JSON.stringify({ jsonrpc: '2.0', id: j?.id, result: { tools: row ? toolsOf(row) : [] } }))
    }
    const profile = row?.profile_overrides ?? {}
    if (r.method === 'GET' && profile.sse_get === false) return void res.writeHead(405, { allow: 'POST, DELETE' }).end()
    if (r.method === 'DELETE' && profile.delete_allowed === false) return void res.writeHead(405, { allow: 'POST, GET' }).end()
    const stub = row?.origin_stub
    if (stub && typeof stub.body === 'string' && stub.body.startsWith('echo ')) return echoAnswer(r, res)
    if (stub) {
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(stub.headers ?? {})) headers[k.toLowerCase()] = v
      if (stub.body === undefined) {
        // a stream the case does not describe: one comment line, then the end
        return void res.writeHead(stub.status, headers).end(headers['content-type']?.includes('event-stream') ? ': ok\n\n' : '')
      }
      const text = typeof stub.body === 'string' ? stub.body : JSON.stringify(stub.body)
      if (!headers['content-type'] && typeof stub.body !== 'string') headers['content-type'] = 'application/json'
      return void res.writeHead(stub.status, headers).end(text)
    }
    echoAnswer(r, res)
  })
  return {
    origin,
    edge,
    forwarded: () => origin.received.filter((r) => !isEdgePull(r)),
    pulls: () => origin.received.filter(isEdgePull),
    setCase(c) {
      current = c
      origin.reset()
    },
    close: async () => {
      await edge.close()
      await origin.close()
    },
  }
}

/** The edge's answer to one case. */
export interface Answer {
  status: number
  headers: Record<string, string>
  text: string
}

/** Sends the case's request to the edge (its named origin), exactly as written in the row. */
export async function send(d: Deployment, c: Case): Promise<Answer> {
  const url = d.edge.url.replace(/\/mcp$/, `/mcp/${c.origin}`)
  const body =
    c.row.request_body_base64 != null
      ? Buffer.from(c.row.request_body_base64, 'base64')
      : c.row.http_method === 'GET' || c.row.http_method === 'DELETE'
        ? undefined
        : (c.row.request_body ?? '')
  const res = await request(url, { method: c.row.http_method as 'POST', headers: c.headers, body, headersTimeout: 20_000, bodyTimeout: 20_000 })
  // An SSE reply may stay open (a listen stream): read what arrives within a short window.
  let text = ''
  const ct = String(res.headers['content-type'] ?? '')
  if (ct.includes('text/event-stream')) {
    const chunks: Buffer[] = []
    const done = (async () => {
      for await (const ch of res.body) chunks.push(ch as Buffer)
    })()
    await Promise.race([done, new Promise((r) => setTimeout(r, 1500))])
    res.body.destroy()
    text = Buffer.concat(chunks).toString('utf8')
  } else text = await res.body.text()
  const headers: Record<string, string> = {}
  for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v)
  return { status: res.statusCode, headers, text }
}

/** The JSON-RPC messages of a JSON or SSE answer. */
export function messagesOf(a: Answer): unknown[] {
  if ((a.headers['content-type'] ?? '').includes('text/event-stream')) {
    const out: unknown[] = []
    for (const block of a.text.split(/\n\n/)) {
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n')
      if (!data) continue
      try {
        const v = JSON.parse(data)
        out.push(...(Array.isArray(v) ? v : [v]))
      } catch {
        // not JSON
      }
    }
    return out
  }
  const v = JSON.parse(a.text)
  return Array.isArray(v) ? v : [v]
}

type Msg = { jsonrpc?: string; id?: unknown; error?: { code: number; message: string; data?: unknown }; result?: Record<string, unknown> }

function checkId(m: Msg, body: Record<string, unknown>, a: Answer, where: string): void {
  const rule = String(body.id_rule ?? '')
  if (body.id_raw_token !== undefined) {
    expect(a.text, where + ' id token').toMatch(new RegExp(`"id"\\s*:\\s*${String(body.id_raw_token)}(?![0-9])`))
    return
  }
  if (rule.includes('not checked')) return
  if (body.id === 'null-or-absent' || rule.startsWith('null-or-absent')) {
    expect(m.id ?? null, where + ' id').toBeNull()
    return
  }
  if ('id' in body) expect(m.id, where + ' id').toStrictEqual(body.id)
}

/**
 * Asserts one answer against a case's expectation: HTTP status, content type, body (codes and
 * ids) and whether the origin was contacted for the request itself.
 */
export function assertCase(c: Case, a: Answer, forwarded: ReceivedRequest[], pulls: ReceivedRequest[] = []): void {
  const e = c.expected
  const where = c.label
  const statuses = Array.isArray(e.http_status) ? e.http_status : [e.http_status]
  expect(statuses, `${where}: status ${a.status}, body ${a.text.slice(0, 300)}`).toContain(a.status)
  const ct = (a.headers['content-type'] ?? '').toLowerCase()
  const body = e.body ?? {}
  const kind = String(body.kind)
  if (e.content_type && e.content_type !== 'none' && !String(e.content_type).includes(' or none')) {
    const allowed = String(e.content_type).split(' or ')
    expect(
      allowed.some((t) => ct.startsWith(t)),
      `${where}: content-type ${ct}`
    ).toBe(true)
  }
  if (kind === 'none') {
    expect(a.text, where + ' empty body').toBe('')
  } else if (kind === 'error') {
    const msgs = messagesOf(a) as Msg[]
    if (ct.includes('json')) expect(a.text.trim().startsWith('{'), where + ' single object').toBe(true)
    expect(msgs.length, where + ' one message').toBe(1)
    const m = msgs[0]!
    expect(m.jsonrpc).toBe('2.0')
    expect(m.error?.code, `${where}: ${a.text.slice(0, 300)}`).toBe(body.code)
    expect(m.result).toBeUndefined()
    checkId(m, body, a, where)
    if (body.message_contains) expect(m.error?.message).toContain(String(body.message_contains))
    if (body.data) expect(m.error?.data).toEqual(body.data)
  } else if (kind === 'tool_error_result') {
    const m = (messagesOf(a) as Msg[])[0]!
    checkId(m, body, a, where)
    expect(m.error, `${where}: ${a.text.slice(0, 300)}`).toBeUndefined()
    expect(m.result?.isError).toBe(true)
    const content = m.result?.content as { type: string; text: string }[]
    expect(content.some((x) => x.type === 'text' && x.text.length > 0)).toBe(true)
    expect(m.result?.structuredContent).toBeUndefined()
    if (body.resultType === 'complete' || c.version === '2026-07-28') expect(m.result?.resultType).toBe('complete')
    else expect(m.result?.resultType).toBeUndefined()
  } else if (kind === 'passthrough') {
    const msgs = messagesOf(a) as Msg[]
    const m = body.id_raw_token !== undefined ? msgs[0]! : msgs.find((x) => JSON.stringify(x.id) === JSON.stringify(body.id))
    expect(m, `${where}: an answer for the id in ${a.text.slice(0, 300)}`).toBeDefined()
    checkId(m!, body, a, where)
    if (body.code !== undefined) expect(m!.error?.code).toBe(body.code)
    if (body.isError === true) expect(m!.result?.isError).toBe(true)
    if (c.row.origin_stub && typeof c.row.origin_stub.body === 'object' && !Array.isArray(c.row.origin_stub.body)) {
      // passthrough: what the origin said for this id, unchanged
      const stub = c.row.origin_stub.body as Msg
      if (stub.result && body.isError !== true) expect(m!.result).toEqual(stub.result)
      if (stub.error) expect(m!.error).toEqual(stub.error)
    }
  } else if (kind === 'batch') {
    expect(a.text.trim().startsWith('['), `${where}: batch array, got ${a.text.slice(0, 300)}`).toBe(true)
    const msgs = JSON.parse(a.text) as Msg[]
    expect(msgs.length, `${where}: ${a.text}`).toBe(body.count)
    const pool = [...msgs]
    for (const want of body.responses as { id: unknown; code?: number; passthrough?: boolean }[]) {
      const i = pool.findIndex(
        (m) => JSON.stringify(m.id ?? null) === JSON.stringify(want.id) && (want.passthrough ? m.error === undefined || m.error.code === -32601 : m.error?.code === want.code)
      )
      expect(i, `${where}: entry ${JSON.stringify(want)} in ${a.text}`).toBeGreaterThanOrEqual(0)
      pool.splice(i, 1)
    }
  } else if (kind === 'sse_passthrough') {
    expect(ct).toContain('text/event-stream')
    const stub = c.row.origin_stub?.body
    if (typeof stub === 'string') for (const line of stub.split('\n').filter((l) => l.startsWith('data:'))) expect(a.text).toContain(line.slice(5).trim())
  } else if (kind === 'none_or_error') {
    if (a.text) {
      const m = (messagesOf(a) as Msg[])[0]!
      if (body.code !== undefined) expect(m.error?.code).toBe(body.code)
    }
  }
  // Response headers the row names.
  for (const [k, v] of Object.entries(e.headers ?? {})) expect(a.headers[k.toLowerCase()], where + ' header ' + k).toBe(v)
  if (e.response_headers?.Allow) expect(a.headers.allow, where + ' Allow').toContain('POST')
  if (e.response_must_not_include_header) expect(a.headers[e.response_must_not_include_header.toLowerCase()]).toBeUndefined()

  // Was the request itself forwarded?
  const f = e.forwarded_to_origin
  const posts = forwarded
  if (f === true) expect(posts.length, `${where}: forwarded`).toBeGreaterThan(0)
  else if (f === false) expect(posts.length, `${where}: not forwarded, got ${posts.map((p) => p.body).join(' | ')}`).toBe(0)
  else if (typeof f === 'string' && f.includes('refresh only')) {
    // D7: the edge pulled the tool list once before refusing; the call itself never left.
    expect(posts.length, `${where}: not forwarded`).toBe(0)
    expect(
      pulls.some((p) => (p.json as { method?: string } | undefined)?.method === 'tools/list'),
      `${where}: one tool-list refresh`
    ).toBe(true)
  } else if (typeof f === 'string' && f.startsWith('first occurrence only')) {
    expect(posts.length).toBe(1)
    expect((posts[0]!.json as unknown[]).length).toBe(1)
  } else if (typeof f === 'string' && f === 'ping only') {
    expect(posts.length).toBe(1)
    expect(posts[0]!.body).not.toContain('initialize')
  } else if (typeof f === 'string' && f.startsWith('element a')) {
    expect(posts.length).toBe(1)
    const ids = (posts[0]!.json as { id?: string }[]).map((m) => m.id ?? null)
    expect(ids).toEqual(['a', null])
  }
  if (typeof e.forwarded_headers === 'string') {
    // e.g. "MCP-Protocol-Version, Mcp-Method, Mcp-Name relayed unchanged"
    for (const name of e.forwarded_headers
      .split(' relayed')[0]!
      .split(',')
      .map((x) => x.trim())) {
      const sent = Object.entries(c.headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1]
      expect(posts[0]?.headers[name.toLowerCase()], `${where}: forwarded ${name}`).toBe(sent)
    }
  }
  if (typeof e.forwarded_body === 'string' && e.forwarded_body.startsWith('byte-identical')) {
    expect(posts[0]?.body).toBe(c.row.request_body)
  }
}
