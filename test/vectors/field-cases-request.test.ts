/**
 * Every request-side case of test/fixtures/vectors/field-cases.jsonl (and each of its variants) on the
 * Node entry and the built Worker in workerd, against a real scripted HTTP origin: HTTP status,
 * body shape (codes and ids), strings that must appear nowhere, and whether the origin was
 * contacted for the call itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES_AND_MIDDLEWARE } from '../helpers/runtimes'
import { deploy, messagesOf, readVectors, send, type Case, type Deployment, type VectorRow } from './rules-harness'

interface FieldCase {
  id: string
  theme: string
  side: string
  tool_schema?: { name: string; inputSchema: unknown }
  request: { headers: Record<string, string>; body: string }
  origin_response?: { status: number; headers?: Record<string, string>; body: string }
  expected: FieldExpected
  variants?: (Partial<FieldCase> & { label: string })[]
}
interface FieldExpected {
  http_status?: number | number[]
  body_shape?: unknown
  must_not_contain?: string[]
  origin_contacted?: boolean
  forwarded_arguments_must_equal?: unknown
  [k: string]: unknown
}

/**
 * Answers the project decided differently from a field case, on purpose (docs/rules.md):
 * - B09 `[1,2]` and `[[]]`: vector 13 (`[1,2,3]` -> HTTP 400) and this case disagree; a batch
 *   whose every entry has a null id is answered 400 (the entries are unchanged).
 * - B15 "initialize with a future version": D14 and the issue refuse an unsupported
 *   `MCP-Protocol-Version` header with 400 -32022 in every era (the body's protocolVersion alone
 *   would be forwarded).
 */
const DECIDED: Record<string, FieldExpected> = {
  'B09 [1,2]': { http_status: 400 },
  'B09 [[]]': { http_status: 400 },
  'B15 initialize with a future version must NOT be refused at HTTP level': { http_status: 400, body_shape: { jsonrpc: '2.0', id: 1, error: { code: -32022 } } },
}

const all = readVectors<FieldCase>('field-cases.jsonl')
const requestSide = all.filter((f) => f.side === 'request')

interface Run {
  label: string
  c: Case
  expected: FieldExpected
}

function runsOf(): Run[] {
  const out: Run[] = []
  let n = 0
  for (const f of requestSide) {
    const variants = [{ label: '', ...f }, ...(f.variants ?? []).map((v) => ({ ...v, label: v.label }))]
    for (const v of variants) {
      const request = v.request ?? f.request
      // A variant without a request only changes the store (B17 "dangling $ref"): it reruns the parent request.
      // A variant's expectation replaces the parent's; it inherits only the status and the forbidden strings.
      const expected: FieldExpected = v.expected
        ? { http_status: f.expected.http_status, ...v.expected, must_not_contain: [...(f.expected.must_not_contain ?? []), ...(v.expected.must_not_contain ?? [])] }
        : f.expected
      const label = `${f.id}${v.label ? ' ' + v.label : ''}`
      const decided = DECIDED[label]
      const exp = decided ? { ...expected, ...decided } : expected
      const tools = [f.tool_schema, v.tool_schema].filter((t): t is { name: string; inputSchema: unknown } => !!t)
      const originResponse = v.origin_response ?? f.origin_response
      const row: VectorRow = {
        n: ++n,
        name: label,
        versions: [],
        http_method: 'POST',
        headers: request.headers,
        request_body: request.body,
        kv_tools: tools,
        origin_stub: originResponse ? { status: originResponse.status, headers: originResponse.headers ?? {}, body: originResponse.body } : null,
        expected: { http_status: 0, body: {} },
      }
      out.push({ label, expected: exp, c: { label, row, version: null, headers: request.headers, expected: row.expected, origin: `f${n}` } })
    }
  }
  return out
}

/** Partial structural match: `<…>` strings stand for any value; arrays match in any order. */
function matches(actual: unknown, shape: unknown, key = ''): boolean {
  if (typeof shape === 'string' && shape.startsWith('<')) return actual !== undefined
  if (typeof shape === 'string' && key === 'message') return typeof actual === 'string' && actual.startsWith(shape)
  if (Array.isArray(shape)) {
    if (!Array.isArray(actual) || actual.length !== shape.length) return false
    const pool = [...actual]
    for (const s of shape) {
      const i = pool.findIndex((a) => matches(a, s))
      if (i < 0) return false
      pool.splice(i, 1)
    }
    return true
  }
  if (shape !== null && typeof shape === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false
    const a = actual as Record<string, unknown>
    if (Object.keys(shape).length === 0) return Object.keys(a).length === 0
    return Object.entries(shape).every(([k, s]) => matches(a[k], s, k))
  }
  return Object.is(actual, shape)
}

const runs = runsOf()

describe.each(RUNTIMES_AND_MIDDLEWARE)('field-cases.jsonl (request side) on $name', ({ name, start }) => {
  let d: Deployment
  let ran = 0
  beforeAll(async () => {
    d = await deploy(
      start,
      runs.map((r) => r.c)
    )
  })
  afterAll(async () => {
    console.log(`[field-cases-request] ${name}: ${ran} of ${runs.length} runs (${requestSide.length} request-side cases) passed`)
    await d?.close()
  })
  it('holds every request-side case', () => {
    expect(requestSide.map((f) => f.id)).toEqual(['B04', 'B05', 'B07', 'B08', 'B09', 'B10', 'B11', 'B12', 'B14', 'B15', 'B17', 'B18', 'B19'])
  })
  for (const r of runs) {
    it(r.label, async () => {
      d.setCase(r.c)
      const a = await send(d, r.c)
      const e = r.expected
      if (e.http_status !== undefined) {
        const ok = Array.isArray(e.http_status) ? e.http_status : [e.http_status]
        expect(ok, `status ${a.status}: ${a.text.slice(0, 300)}`).toContain(a.status)
      }
      expect(a.status).toBeLessThan(500)
      if (e.body_shape === null) expect(a.text).toBe('')
      else if (e.body_shape !== undefined && typeof e.body_shape === 'object') {
        const msgs = messagesOf(a)
        const actual = a.text.trim().startsWith('[') ? msgs : msgs[0]
        expect(matches(actual, e.body_shape), `${a.text.slice(0, 400)} vs ${JSON.stringify(e.body_shape)}`).toBe(true)
      }
      for (const s of e.must_not_contain ?? []) expect(a.text).not.toContain(s)
      const forwarded = d.forwarded()
      if (e.origin_contacted === false) expect(forwarded.length, forwarded.map((f) => f.body).join(' | ')).toBe(0)
      if (e.origin_contacted === true) expect(forwarded.length).toBeGreaterThan(0)
      if (e.forwarded_arguments_must_equal !== undefined) {
        const j = forwarded[0]!.json as { params: { arguments: unknown } }
        expect(j.params.arguments).toEqual(e.forwarded_arguments_must_equal)
      }
      ran++
    })
  }
})
