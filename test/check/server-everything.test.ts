/**
 * `mcp-edge check` against @modelcontextprotocol/server-everything (the reference server, SDK v1
 * McpServer with zod validation, every POST answered with SSE), started on loopback as in
 * test/interop/server-everything.test.ts. What it shows about the reference server: its argument checks
 * answer isError results (pass), but `arguments` that is not an object gets the SDK's -32603
 * (misleads), an unknown tool gets an isError result instead of -32602, a foreign Origin is
 * served (its HTTP app checks no Origin), and an invalid request is answered -32700.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServerEverything, type Proc } from '../helpers/peers-procs'
import { checkJson, row, type JsonReport } from '../helpers/check-cli'

let se: { proc: Proc; url: string }
let report: JsonReport
let code: number | null

beforeAll(async () => {
  se = await startServerEverything()
  const out = await checkJson(se.url, ['--call', 'echo', '--call', 'get-sum', '--call', 'get-structured-content'])
  report = out.report
  code = out.run.code
}, 90_000)

afterAll(async () => {
  await se?.proc.stop()
})

describe('check against server-everything', () => {
  it('negotiates each version with the official SDK client and lists its tools', () => {
    expect(report.versions.map((v) => v.negotiated)).toEqual(['2025-11-25', '2025-11-25', '2025-06-18', '2025-03-26'])
    expect(report.versions[0]).toMatchObject({ version: '2026-07-28', skipped: 'the server answered 2025-11-25' })
    const list = row(report, '2025-11-25 * tools-list')
    expect(list.grade).toBe('pass')
    expect(Number(/^(\d+) tools/.exec(list.answered)?.[1])).toBeGreaterThanOrEqual(10)
    // schemas declare draft-07, whatever the version
    expect(row(report, '2025-11-25 get-sum schema').answered).toMatch(/^dialect draft-07/)
  })

  it('its zod validation passes the argument cases: isError results, no echo', () => {
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      for (const c of ['missing-required', 'wrong-type']) {
        const r = row(report, `${v} get-sum ${c}`)
        expect(r.grade, r.id).toBe('pass')
        expect(r.answered).toMatch(/result isError/)
      }
    }
  })

  it('valid calls with generated arguments pass, structuredContent included', () => {
    for (const tool of ['echo', 'get-sum', 'get-structured-content']) expect(row(report, `2025-11-25 ${tool} valid-call`).grade).toBe('pass')
    expect(row(report, '2025-11-25 get-sum valid-call').answered).toMatch(/^HTTP 200 sse: result/)
  })

  it('names what misleads or fails: -32603 for non-object arguments, the unknown tool, the unchecked Origin', () => {
    expect(code).toBe(1)
    expect(row(report, '2025-11-25 echo arguments-not-object').grade).toBe('misleads')
    expect(row(report, '2025-11-25 * unknown-tool').grade).toBe('fails')
    expect(row(report, '2025-11-25 * origin-header').why).toContain('foreign Origin was served')
    const misleading = new Set(report.rows.filter((r) => r.grade === 'misleads').map((r) => r.case))
    expect([...misleading].sort()).toEqual(['arguments-not-object', 'batch'])
  })
})
