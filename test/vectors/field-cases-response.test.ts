/**
 * The response-side rows of test/fixtures/vectors/field-cases.jsonl (every row or variant that gives
 * an `origin_response`): B01 (isError kept), B02 (hidden failure marked, negative controls kept),
 * B14 (a notification answered 204 by the origin reaches the client as 202). The scripted origin
 * answers exactly what the row says; the edge runs on Node and on the Worker in workerd.
 * B02's notes also list negative controls; they are added as rows here, with the one place where
 * the project follows docs/design.md D11 instead (one level down in `data` IS flagged: docs/grading.md).
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES_AND_MIDDLEWARE, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { ADMIN_TOKEN, gradesOf, nextLog, post, postLogs, pushTools } from '../helpers/grading'

interface OriginResponse {
  status: number
  headers: Record<string, string>
  body: string
}
interface FieldRow {
  id: string
  side: string
  request: { headers: Record<string, string>; body: string }
  origin_response?: OriginResponse
  expected: { http_status: number | number[]; body_shape?: unknown; must_not_contain?: string[] }
  variants?: { label: string; request?: FieldRow['request']; origin_response?: OriginResponse; expected: FieldRow['expected'] }[]
}

const FILE = resolve(import.meta.dirname, '../fixtures/vectors/field-cases.jsonl')
const ROWS = readFileSync(FILE, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as FieldRow)

/** What the edge must relay for one case: the origin's body unchanged, or with isError set. */
type Expect = { kind: 'unchanged' } | { kind: 'isError' } | { kind: 'no-body'; status: 202 }

interface Case {
  name: string
  headers: Record<string, string>
  request: string
  origin: OriginResponse
  expect: Expect
  status: number
  grade?: string
  mustNotContain: string[]
  /** Added from B02's notes (not a row or variant of the file). */
  fromNotes?: boolean
}

/** Builds the request for a response-side case: the row's request with the id the origin answers. */
function requestFor(req: FieldRow['request'], origin: OriginResponse): string {
  const msg = JSON.parse(req.body) as Record<string, unknown>
  if (!('id' in msg)) return req.body
  const answered = origin.body ? (JSON.parse(origin.body) as { id?: unknown }).id : undefined
  return JSON.stringify({ ...msg, id: answered ?? msg.id })
}

function expectFrom(row: FieldRow['expected'], origin: OriginResponse): Pick<Case, 'expect' | 'status' | 'grade'> {
  const status = Array.isArray(row.http_status) ? row.http_status[0]! : row.http_status
  if (row.body_shape === null) return { expect: { kind: 'no-body', status: 202 }, status }
  const shape = row.body_shape as { result?: { isError?: unknown } }
  const originSaysError = (JSON.parse(origin.body) as { result?: { isError?: unknown } }).result?.isError === true
  if (shape.result?.isError === true) return { expect: originSaysError ? { kind: 'unchanged' } : { kind: 'isError' }, status, grade: 'tool_error' }
  return { expect: { kind: 'unchanged' }, status, grade: 'ok' }
}

const CASES: Case[] = []
for (const row of ROWS) {
  const parts = [
    { label: row.id, request: row.request, origin_response: row.origin_response, expected: row.expected },
    ...(row.variants ?? []).map((v) => ({ ...v, label: `${row.id} / ${v.label}`, request: v.request ?? row.request })),
  ]
  for (const p of parts) {
    if (!p.origin_response) continue
    CASES.push({
      name: p.label,
      headers: p.request.headers,
      request: requestFor(p.request, p.origin_response),
      origin: p.origin_response,
      ...expectFrom(p.expected, p.origin_response),
      mustNotContain: p.expected.must_not_contain ?? row.expected.must_not_contain ?? [],
    })
  }
}

// B02's notes: negative controls ("success":"false" as a string, nested, plain prose). Nested one
// level down in `data` is flagged by docs/design.md D11, which the project follows (docs/grading.md).
const B02 = ROWS.find((r) => r.id === 'B02')!
const b02 = (id: number, text: string): OriginResponse => ({
  status: 200,
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } }),
})
for (const [label, id, text, kind] of [
  ['B02 / negative control: "success":"false" (a string)', 21, '{"success":"false"}', 'unchanged'],
  ['B02 / negative control: plain prose', 22, 'The query did not succeed: success false.', 'unchanged'],
  ['B02 / nested {"data":{"success":false}}: flagged by D11 (differs from the row notes)', 23, '{"data":{"success":false}}', 'isError'],
  ['B02 / two levels down: not flagged', 24, '{"data":{"data":{"success":false}}}', 'unchanged'],
] as const) {
  const origin = b02(id, text)
  CASES.push({
    name: label,
    headers: B02.request.headers,
    request: requestFor(B02.request, origin),
    origin,
    expect: { kind },
    status: 200,
    grade: kind === 'isError' ? 'tool_error' : 'ok',
    mustNotContain: [],
    fromNotes: true,
  })
}

/** The request id the cases send: the correlation id of the edge's classification of a result it marks isError. */
const RID = 'field-case'

/** The origin's body with `isError: true` and the edge's classification appended to its result (the edge's only change). */
function withIsError(body: string): string {
  const end = body.lastIndexOf('}', body.length - 2)
  return (
    body.slice(0, end) +
    `,"isError":true,"_meta":{"io.mcp-edge/failure":{"class":"capability","code":"hidden_failure","correlationId":"${RID}","agentGuidance":"The tool reported a failure in its result; read it before calling again."}}` +
    body.slice(end)
  )
}

describe.each(RUNTIMES_AND_MIDDLEWARE)('field cases, response side, on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    edge = await start({ ORIGIN_URL: origin.url, ADMIN_TOKEN })
    await pushTools(edge, [
      { name: 'search_docs', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } },
      { name: 'run_query', inputSchema: { type: 'object', properties: { query: { type: 'string' } } } },
    ])
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('covers every response-side row of field-cases.jsonl', () => {
    const withOrigin = CASES.filter((c) => !c.fromNotes)
    expect(withOrigin.map((c) => c.name.split(' / ')[0]).sort()).toEqual(['B01', 'B01', 'B02', 'B02', 'B02', 'B14'])
    expect(CASES.length).toBe(10)
  })

  it.each(CASES)('$name', async (c) => {
    origin.handle((_req, res) => {
      const headers = Object.fromEntries(Object.entries(c.origin.headers).map(([k, v]) => [k.toLowerCase(), v]))
      res.writeHead(c.origin.status, headers).end(c.origin.body)
    })
    origin.reset()
    const before = (await postLogs(edge)).length
    const got = await post(edge, c.request, { ...c.headers, 'x-request-id': RID })
    expect(got.status).toBe(c.status)
    if (c.expect.kind === 'no-body') {
      expect(got.text).toBe('')
    } else {
      expect(got.headers.get('content-type')).toBe('application/json')
      expect(got.text).toBe(c.expect.kind === 'unchanged' ? c.origin.body : withIsError(c.origin.body))
      // The content text is byte-identical to the origin's.
      const sent = JSON.parse(c.origin.body) as { result: { content: unknown } }
      expect((JSON.parse(got.text) as { result: { content: unknown } }).result.content).toEqual(sent.result.content)
      expect(got.headers.get('mcp-edge-grade')).toBe(`${c.grade}=1`)
      const log = await nextLog(edge, before)
      expect(gradesOf(log).map((g) => g.grade)).toEqual([c.grade])
    }
    for (const s of c.mustNotContain) expect(got.text).not.toContain(s)
    // Forwarded once, byte for byte.
    expect(origin.received.filter((r) => r.body === c.request).length).toBe(1)
  })
})
