/**
 * `mcp-edge check` against a deliberately broken scripted server (test/helpers/broken-mcp-server.ts):
 * every way it is broken must come out as its own row with the right grade: JSON-RPC errors under
 * HTTP 200 reported as results, stack traces (in a -32603 message and in an HTTP 500 page), echoed
 * argument values, a batch that fails whole, a response to a notification, unchecked Origin and
 * protocol-version headers, a text/plain tool list, a result beside an error, and a result that
 * breaks its outputSchema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBrokenServer } from '../helpers/broken-mcp-server'
import type { ScriptedOrigin } from '../helpers/scripted-origin'
import { checkJson, row, type JsonReport } from '../helpers/check-cli'

let server: ScriptedOrigin
let report: JsonReport
let code: number | null

beforeAll(async () => {
  server = await startBrokenServer()
  const out = await checkJson(server.url, ['--call', 'lookup', '--call', 'stats', '--version', '2025-11-25', '--version', '2025-03-26'])
  report = out.report
  code = out.run.code
})

afterAll(async () => {
  await server?.close()
})

describe('check against a broken server', () => {
  it('exits 1 and checks only the versions asked', () => {
    expect(code).toBe(1)
    expect(report.versions.map((v) => v.version)).toEqual(['2025-11-25', '2025-03-26'])
  })

  it('a JSON-RPC error reported as a result misleads (unknown tool answered {"ok":false} without isError)', () => {
    const r = row(report, '2025-11-25 * unknown-tool')
    expect(r.grade).toBe('misleads')
    expect(r.why).toContain('hidden in a result without isError')
  })

  it('stack traces mislead: in a -32603 message, and in an HTTP 500 page for a parse error', () => {
    const missing = row(report, '2025-11-25 lookup missing-required')
    expect(missing.grade).toBe('misleads')
    expect(missing.why).toContain('-32603 Internal error for a client mistake')
    expect(missing.why).toContain('a stack trace in the answer')
    const parse = row(report, '2025-03-26 * parse-error')
    expect(parse.grade).toBe('misleads')
    expect(parse.why).toContain('HTTP 500')
    expect(parse.why).toContain('stack trace')
    expect(parse.answered).toMatch(/^HTTP 500 text\/html/)
  })

  it('an echoed rejected value misleads even inside an isError result', () => {
    for (const tool of ['lookup', 'stats']) {
      const r = row(report, `2025-11-25 ${tool} wrong-type`)
      expect(r.grade).toBe('misleads')
      expect(r.answered).toMatch(/result isError/)
      expect(r.why).toBe('the rejected value is echoed back')
    }
  })

  it('arguments that are not an object answered with a success mislead', () => {
    expect(row(report, '2025-03-26 lookup arguments-not-object').why).toBe('reported as a success: a result without isError')
  })

  it('a batch that fails whole fails the spec', () => {
    const r = row(report, '2025-03-26 * batch')
    expect(r.grade).toBe('fails')
    expect(r.why).toContain('failed whole')
    expect(r.rule).toContain('JSON-RPC 2.0 §6')
  })

  it('valid calls: a result beside an error misleads; structuredContent breaking outputSchema fails (2025-11-25 only)', () => {
    const both = row(report, '2025-11-25 lookup valid-call')
    expect(both.grade).toBe('misleads')
    expect(both.rule).toContain('D10')
    const output = row(report, '2025-11-25 stats valid-call')
    expect(output.grade).toBe('fails')
    expect(output.why).toContain('does not match outputSchema at /count (type)')
    expect(row(report, '2025-03-26 stats valid-call').grade).toBe('pass')
  })

  it('transport: response to a notification, foreign Origin served, bogus version served, text/plain answers', () => {
    expect(row(report, '2025-11-25 * notification').why).toBe('a JSON-RPC response to a notification')
    const origin = row(report, '2025-11-25 * origin-header')
    expect(origin.grade).toBe('fails')
    expect(origin.status).toBe(200)
    expect(row(report, '2025-11-25 * version-header').grade).toBe('fails')
    expect(report.rows.some((r) => r.id === '2025-03-26 * version-header')).toBe(false)
    const ct = row(report, '2025-11-25 * content-type')
    expect(ct.grade).toBe('fails')
    expect(ct.answered).toContain('text/plain')
  })

  it('what it does right passes: an invalid request gets -32600', () => {
    expect(row(report, '2025-11-25 * invalid-request').grade).toBe('pass')
  })

  it('every request went to the server over the session the SDK opened, and none was a GET', () => {
    const posts = server.received.filter((r) => r.method === 'POST')
    expect(server.received.some((r) => r.method === 'GET')).toBe(false)
    expect(posts.length).toBe(report.requests - server.received.filter((r) => r.method === 'DELETE').length)
    const afterHandshake = posts.filter((r) => (r.json as { method?: string } | undefined)?.method !== 'initialize')
    expect(afterHandshake.every((r) => r.headers['mcp-session-id'] === 'broken-session')).toBe(true)
  })

  it('2026-07-28: a server that claims the revision but checks no header or envelope fails those rows', async () => {
    const { run, report: modern } = await checkJson(server.url, ['--version', '2026-07-28', '--call', 'lookup', '--call', 'stats'])
    expect(run.code).toBe(1)
    expect(modern.versions).toEqual([{ version: '2026-07-28', negotiated: '2026-07-28' }])
    expect(row(modern, '2026-07-28 * handshake').grade).toBe('pass')
    const list = row(modern, '2026-07-28 * tools-list')
    expect(list.grade).toBe('fails')
    expect(list.why).toContain('resultType')
    for (const c of ['header-mismatch', 'envelope-missing', 'version-header']) {
      const r = row(modern, `2026-07-28 * ${c}`)
      expect(r.grade, c).toBe('fails')
      expect(r.why, c).toBe('served as if nothing were wrong')
    }
    const stats = row(modern, '2026-07-28 stats valid-call')
    expect(stats.grade).toBe('fails')
    expect(stats.why).toBe('the result has no resultType')
    expect(modern.rows.some((r) => r.case === 'batch')).toBe(false)
    // every request after the probe carried the envelope and the standard headers
    const calls = server.received.filter((r) => (r.json as { method?: string } | undefined)?.method === 'tools/call' && r.headers['mcp-protocol-version'] === '2026-07-28')
    expect(calls.length).toBeGreaterThan(0)
    for (const c of calls) {
      const params = (c.json as { params: { name: string; _meta?: Record<string, unknown> } }).params
      expect(params._meta?.['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28')
      expect(c.headers['mcp-method']).toBe('tools/call')
      expect(c.headers['mcp-name']).toBe(params.name)
      expect(c.headers['mcp-session-id']).toBeUndefined()
    }
  })
})
