/**
 * The validation rows of test/fixtures/vectors as a table on both runtimes: every spec-vectors.jsonl
 * row about `tools/call` arguments and tool schemas (run in each protocol version the row lists,
 * with `expected_by_version` applied), the 2026-07-28 `tools/call` validation rows that need no
 * special deployment profile, and the field cases about argument validation (B04, B05, B17, B18,
 * B19 with their variants). Each row gets its own scripted origin publishing the row's
 * tools, so the edge learns them exactly as in production (its own pull, D7).
 * Rows about classification, batches and grading belong to the other engineers' tables.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { eventually, serveMcp, toolCalls } from '../helpers/mcp-script'

const VECTORS = resolve(import.meta.dirname, '../fixtures/vectors')
const read = (f: string) =>
  readFileSync(resolve(VECTORS, f), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>)

const SPEC_ROWS = new Set([
  'mcp-id-huge-integer-local-error',
  'mcp-tools-call-unknown-tool',
  'mcp-tools-call-arguments-array',
  'mcp-tools-call-arguments-null',
  'mcp-tools-call-missing-required-argument',
  'mcp-tools-call-wrong-type',
  'mcp-tools-call-extra-property-additionalProperties-false',
  'mcp-tools-call-arguments-omitted-but-required',
  'mcp-tools-call-noparam-tool-given-args',
  'mcp-tools-call-minimum-violated',
  'mcp-tools-call-draft07-dependencies',
  'mcp-tools-call-2020-12-prefixItems',
  'mcp-tools-call-valid-forwarded',
  'mcp-tools-call-extra-property-allowed',
  'mcp-tools-call-noparam-tool-no-arguments',
  'mcp-tools-call-unsupported-schema-dialect',
  'mcp-tools-call-huge-integer-argument',
])
const ROWS_2026 = new Set([
  'm26-tools-call-valid-forwarded',
  'm26-tools-call-missing-required-argument',
  'm26-tools-call-extra-property-additionalProperties-false',
  'm26-tools-call-unknown-tool',
  'm26-tools-call-arguments-array',
  'm26-tools-call-name-missing',
  'm26-tools-call-oneOf-composition',
  'm26-tools-call-external-ref-not-fetched',
  'era-2025-11-25-invalid-args-no-resultType',
])
const FIELD_ROWS = new Set(['B04', 'B05', 'B17', 'B18', 'B19'])

interface Case {
  label: string
  origin: string
  headers: Record<string, string>
  body: string
  expected: Record<string, any>
  stub?: Record<string, any>
}

const cases: Case[] = []
const toolsByOrigin = new Map<string, unknown[]>()

for (const row of read('spec-vectors.jsonl')) {
  if (!SPEC_ROWS.has(row.name)) continue
  const origin = `v${row.n}`
  toolsByOrigin.set(origin, row.kv_tools)
  for (const v of (row.versions as string[]).filter((x) => !x.startsWith('2026'))) {
    const byVersion = row.expected_by_version?.[v] ?? {}
    const headers = { ...row.headers, 'MCP-Protocol-Version': v }
    cases.push({
      label: `${row.name} @${v}`,
      origin,
      headers,
      body: row.request_body,
      expected: { ...row.expected, ...byVersion, body: byVersion.body ?? row.expected.body },
      stub: row.origin_stub,
    })
  }
}
for (const row of read('spec-vectors-2026.jsonl')) {
  if (!ROWS_2026.has(row.name) || row.profile_overrides) continue
  const origin = `v${row.n}`
  toolsByOrigin.set(origin, row.kv_tools ?? [])
  cases.push({ label: row.name, origin, headers: row.headers, body: row.request_body, expected: row.expected, stub: row.origin_stub })
}
for (const row of read('field-cases.jsonl')) {
  if (!FIELD_ROWS.has(row.id)) continue
  const origin = row.id.toLowerCase()
  const tools = [row.tool_schema, ...(row.variants ?? []).map((v: any) => v.tool_schema)].filter(Boolean)
  toolsByOrigin.set(origin, tools)
  cases.push({ label: `${row.id} ${row.theme}`, origin, headers: row.request.headers, body: row.request.body, expected: row.expected })
  for (const v of row.variants ?? []) {
    if (!v.request) {
      // B17 "dangling $ref in another tool's schema": the broken tool is forwarded unvalidated
      // (D8) while the other tools of the same list keep being validated (the cases above).
      const call = { jsonrpc: '2.0', id: 'dangling', method: 'tools/call', params: { name: v.tool_schema.name, arguments: { screen: 1 } } }
      cases.push({
        label: `${row.id} variant: ${v.label}`,
        origin,
        headers: row.request.headers,
        body: JSON.stringify(call),
        expected: { http_status: 200, body: { kind: 'passthrough', id: 'dangling', grade: 'unvalidated' }, origin_contacted: true },
      })
      continue
    }
    // A variant states its own expectation; a local error means the origin is not contacted.
    const expected = { ...v.expected }
    if (expected.body_shape?.error && expected.origin_contacted === undefined) expected.origin_contacted = false
    cases.push({ label: `${row.id} variant: ${v.label}`, origin, headers: v.request.headers, body: v.request.body, expected })
    if (v.label === 'explicit draft-07 tuple schema') {
      // The variant's note: ["a", 1] must pass.
      const body = v.request.body.replace('["a","b"]', '["a",1]').replace('"id":18', '"id":19')
      cases.push({
        label: `${row.id} variant: ${v.label}, valid pair forwarded`,
        origin,
        headers: v.request.headers,
        body,
        expected: { http_status: 200, origin_contacted: true, body: { kind: 'passthrough', id: 19 } },
      })
    }
  }
}

/** Keeps the checkable parts of a body shape: placeholders like "<from origin>" are dropped. */
function concrete(shape: unknown): unknown {
  if (typeof shape === 'string' && shape.startsWith('<')) return undefined
  if (typeof shape !== 'object' || shape === null || Array.isArray(shape)) return shape
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(shape)) {
    const c = concrete(v)
    if (c !== undefined) out[k] = c
  }
  return out
}

describe.each(RUNTIMES)('validation vectors on $name', ({ start }) => {
  const origins = new Map<string, ScriptedOrigin>()
  let edge: EdgeUnderTest
  beforeAll(async () => {
    for (const [name, tools] of toolsByOrigin) {
      const o = await startScriptedOrigin()
      const stubs = cases.filter((c) => c.origin === name && c.stub)
      serveMcp(o, {
        pages: [tools],
        call: (_n, _a, id) => {
          const stub = stubs[0]?.stub
          return stub ? { ...stub.body.result } : { content: [{ type: 'text', text: `answer ${JSON.stringify(id)}` }] }
        },
      })
      origins.set(name, o)
    }
    edge = await start({ ORIGINS: JSON.stringify(Object.fromEntries([...origins].map(([k, o]) => [k, o.url]))), REFRESH_MIN_INTERVAL_MS: '0' })
  })
  afterAll(async () => {
    await edge?.close()
    await Promise.all([...origins.values()].map((o) => o.close()))
  })

  it.each(cases)('$label', async (c) => {
    const origin = origins.get(c.origin)!
    const before = toolCalls(origin).length
    const receivedBefore = origin.received.length
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(c.headers)) if (k.toLowerCase() !== 'mcp-session-id') headers[k] = v
    const res = await fetch(`${edge.url}/${c.origin}`, { method: 'POST', headers, body: c.body })
    const text = await res.text()
    const json = JSON.parse(text)
    const exp = c.expected
    const statuses = Array.isArray(exp.http_status) ? exp.http_status : [exp.http_status ?? 200]
    expect(statuses).toContain(res.status)
    const calls = toolCalls(origin).slice(before)
    const body = exp.body as Record<string, any> | undefined
    if (body?.kind === 'error') {
      expect(json.error?.code).toBe(body.code)
      if (body.id !== undefined) expect(json.id).toEqual(body.id)
      if (body.id_raw_token) expect(text).toContain(`"id":${body.id_raw_token}`)
      if (body.message_contains) expect(json.error.message).toContain(body.message_contains)
    } else if (body?.kind === 'tool_error_result') {
      expect(json.id).toEqual(body.id)
      expect(json.result.isError).toBe(true)
      expect(json.result.content[0]).toMatchObject({ type: 'text' })
      expect(json.result.structuredContent).toBeUndefined()
      if (body.resultType !== undefined) expect(json.result.resultType).toBe(body.resultType === 'absent' ? undefined : body.resultType)
    } else if (body?.kind === 'passthrough') {
      expect(json.id).toEqual(body.id)
      expect(json.result).toBeDefined()
      if (body.grade) {
        const label = typeof body.id === 'string' ? JSON.stringify(body.id) : String(body.id)
        const row = await eventually(async () => (await edge.logs()).flatMap((l) => (l.grades ?? []) as { id: string; grade: string }[]).find((g) => g.id === label))
        expect(row.grade).toBe(body.grade)
      }
    }
    if (exp.forwarded_to_origin === true || exp.origin_contacted === true) expect(calls).toHaveLength(1)
    if (exp.forwarded_to_origin === false || typeof exp.forwarded_to_origin === 'string' || exp.origin_contacted === false) expect(calls).toHaveLength(0)
    if (typeof exp.forwarded_body === 'string' && exp.forwarded_body.startsWith('byte-identical')) {
      const forwarded = origin.received.slice(receivedBefore).find((r) => (r.json as { method?: string })?.method === 'tools/call')
      expect(forwarded?.body).toBe(c.body)
    }
    if (exp.forwarded_arguments_must_equal) expect(calls[0]?.arguments).toEqual(exp.forwarded_arguments_must_equal)
    if (exp.body_shape) expect(json).toMatchObject(concrete(exp.body_shape) as object)
    for (const s of exp.must_not_contain ?? []) expect(text).not.toContain(s)
  })
})
