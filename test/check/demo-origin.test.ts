/**
 * `mcp-edge check` run as a process against the demo origin (packages/cli/demo/origin.ts), directly and
 * through the edge (startEdge, Node). Directly, every deliberate red fixture of the demo is named
 * by a misleading row: no argument validation in get_forecast, create_order, echo and run_query
 * (a call missing a required argument or with a wrong type is answered as a success), echo and
 * get_forecast echoing the rejected value, run_query's `success: false` without isError, the
 * SDK's -32603 for `arguments` that is not an object, the batch's bad element; and the spec
 * failures (the unknown tool answered with isError, an invalid request answered -32700).
 * Through the edge, every one of those rows passes and check exits 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import { checkJson, row, runMcpEdge, type JsonReport } from '../helpers/check-cli'

const VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26']
const DEMO = ['get_forecast', 'create_order', 'run_query', 'echo']

let origin: RunningOrigin
let edge: RunningEdge
let direct: { code: number | null; report: JsonReport }

beforeAll(async () => {
  origin = await startDemoOrigin()
  edge = await startEdge({ port: 0, env: { ORIGIN_URL: origin.url, STORE_FILE: 'memory' }, log: () => undefined })
  const { run, report } = await checkJson(origin.url, ['--call', 'run_query', '--call', 'get_forecast'])
  direct = { code: run.code, report }
})

afterAll(async () => {
  await edge?.close()
  await origin?.close()
})

describe('check against the demo origin directly', () => {
  it('speaks each version and exits 1 (rows mislead)', () => {
    expect(direct.code).toBe(1)
    expect(direct.report.exitCode).toBe(1)
    // the SDK v1 origin does not speak 2026-07-28: the SDK v2 client falls back to its legacy handshake
    expect(direct.report.versions.map((v) => [v.version, v.negotiated])).toEqual([['2026-07-28', '2025-11-25'], ...VERSIONS.map((v) => [v, v])])
    expect(row(direct.report, '2026-07-28 * handshake').grade).toBe('info')
    for (const v of VERSIONS) expect(row(direct.report, `${v} * handshake`).grade).toBe('pass')
  })

  it('names every tool without argument validation: missing and wrong-type calls answered as successes', () => {
    for (const v of VERSIONS)
      for (const tool of DEMO) {
        const missing = row(direct.report, `${v} ${tool} missing-required`)
        expect(missing.grade, missing.id).toBe('misleads')
        expect(missing.rule).toContain('Security Considerations')
        const wrong = row(direct.report, `${v} ${tool} wrong-type`)
        expect(wrong.grade, wrong.id).toBe('misleads')
      }
    expect(row(direct.report, '2025-06-18 get_forecast missing-required').answered).toContain('Forecast for undefined')
    expect(row(direct.report, '2025-06-18 get_forecast missing-required').why).toContain('reported as a success')
  })

  it('names the echoed rejected value (echo and get_forecast print the canary)', () => {
    for (const tool of ['echo', 'get_forecast']) expect(row(direct.report, `2025-11-25 ${tool} wrong-type`).why).toContain('the rejected value is echoed back')
    expect(row(direct.report, '2025-11-25 create_order wrong-type').why).not.toContain('echoed')
  })

  it("names run_query's hidden failure (success: false without isError) in its valid call", () => {
    for (const v of VERSIONS) {
      const r = row(direct.report, `${v} run_query valid-call`)
      expect(r.grade).toBe('misleads')
      expect(r.why).toContain('success: false')
      expect(r.rule).toContain('D11')
    }
    expect(row(direct.report, '2025-11-25 get_forecast valid-call').grade).toBe('pass')
    // never called unless marked safe
    expect(direct.report.rows.some((r) => r.id.endsWith('echo valid-call'))).toBe(false)
  })

  it('names the internal error for arguments that are not an object, and the batch', () => {
    for (const v of VERSIONS) {
      const r = row(direct.report, `${v} echo arguments-not-object`)
      expect(r.grade).toBe('misleads')
      expect(r.answered).toMatch(/error -32603/)
    }
    const batch = row(direct.report, '2025-03-26 * batch')
    expect(batch.grade).toBe('misleads')
    expect(batch.answered).toBe('HTTP 200 sse: result, result, error -32603')
    expect(direct.report.rows.some((r) => r.id === '2025-06-18 * batch')).toBe(false)
  })

  it('grades spec failures and passes as the specs say', () => {
    const unknown = row(direct.report, '2025-11-25 * unknown-tool')
    expect(unknown.grade).toBe('fails')
    expect(unknown.why).toContain('isError result where a JSON-RPC error is required')
    expect(row(direct.report, '2025-11-25 * invalid-request').why).toBe('error -32700 instead of -32600')
    for (const v of VERSIONS) {
      for (const c of ['parse-error', 'notification', 'origin-header', 'content-type', 'tools-list']) expect(row(direct.report, `${v} * ${c}`).grade, `${v} ${c}`).toBe('pass')
    }
    expect(row(direct.report, '2025-11-25 * version-header').answered).toMatch(/^HTTP 400 json: error -32000/)
    expect(row(direct.report, '2025-11-25 create_order schema').answered).toBe('dialect 2020-12')
    expect(row(direct.report, '2025-06-18 create_order schema').answered).toBe('dialect draft-07')
  })

  it('sorts misleading rows first, then failures', () => {
    const grades = direct.report.rows.map((r) => r.grade)
    const firstPass = grades.indexOf('pass')
    expect(grades.slice(0, grades.indexOf('fails'))).toEqual(Array(grades.indexOf('fails')).fill('misleads'))
    expect(grades.slice(firstPass).every((g) => g === 'pass' || g === 'info')).toBe(true)
  })

  it('the table names every red fixture: each demo tool misleads, and run_query hides its failure', async () => {
    const table = await runMcpEdge(['check', origin.url, '--version', '2025-11-25', '--call', 'run_query', '--format', 'table'], 60_000, { COLUMNS: '160' })
    expect(table.code).toBe(1)
    const misleading = table.stdout.split('\n').filter((l) => l.startsWith('MISLEADS'))
    for (const tool of DEMO) {
      for (const c of ['missing-required', 'wrong-type', 'arguments-not-object'])
        expect(
          misleading.some((l) => new RegExp(`^MISLEADS 2025-11-25 ${tool} +${c} `).test(l)),
          `${tool} ${c}`
        ).toBe(true)
    }
    expect(misleading.some((l) => /^MISLEADS 2025-11-25 run_query +valid-call +HTTP 200 sse: result "\{\\"success\\":false/.test(l))).toBe(true)
    expect(table.stdout).toMatch(/\n {9}why: a failure reported as a success: the result says success: false/)
  })

  it('prints plain lines when stdout is not a terminal, and a table on request', async () => {
    const lines = await runMcpEdge(['check', origin.url, '--version', '2025-06-18', '--tool', 'echo'])
    expect(lines.code).toBe(1)
    const out = lines.stdout.trim().split('\n')
    expect(out[0]).toMatch(/^MISLEADS 2025-06-18 echo (missing-required|wrong-type|arguments-not-object): HTTP 200 sse: /)
    expect(out.at(-1)).toMatch(/: 3 misleads, 2 fail the spec, \d+ pass, 0 info; \d+ requests$/)
    expect(lines.stdout).not.toContain('get_forecast')
    const table = await runMcpEdge(['check', origin.url, '--version', '2025-06-18', '--tool', 'echo', '--format', 'table'])
    expect(table.stdout.split('\n')[0]).toMatch(/^grade +version +tool +case +answered +rule/)
    expect(table.stdout).toMatch(/\n {9}why: the rejected value is echoed back/)
  })
})

describe('check through the edge', () => {
  it('every misleading row of the direct run passes through the edge, and check exits 0', async () => {
    const { run, report } = await checkJson(origin.url, ['--through', edge.url, '--call', 'run_query', '--call', 'get_forecast'])
    expect(run.code).toBe(0)
    expect(report.through).toBe(edge.url)
    const misleading = report.rows.filter((r) => r.grade === 'misleads')
    expect(misleading.length).toBe(direct.report.rows.filter((r) => r.grade === 'misleads').length)
    for (const r of misleading) expect(r.through?.grade, r.id).toBe('pass')
    for (const r of report.rows) expect(r.through?.grade, r.id).not.toBe('misleads')
    expect(row(report, '2025-11-25 run_query valid-call').through!.answered).toMatch(/result isError/)
    expect(row(report, '2025-06-18 echo wrong-type').through!.answered).toMatch(/error -32602 "Invalid arguments/)
    expect(row(report, '2025-11-25 echo wrong-type').through!.answered).toMatch(/result isError "Invalid arguments/)
  })

  it('checked on its own, the edge has no misleading or failing row (--strict exits 0)', async () => {
    const { run, report } = await checkJson(edge.url, ['--strict', '--call', 'run_query'])
    expect(run.code).toBe(0)
    expect(report.counts.misleads).toBe(0)
    expect(report.counts.fails).toBe(0)
    expect(row(report, '2025-03-26 * batch').answered).toBe('HTTP 200 sse: result, result, error -32602')
  })
})

describe('check against the demo origin with the conformance fixtures', () => {
  it('a server request on the call stream is refused with -32601 and named: sampling sent to a client without the capability', async () => {
    const withFixtures = await startDemoOrigin({ fixtures: true })
    try {
      const { report } = await checkJson(withFixtures.url, ['--version', '2025-11-25', '--tool', 'test_sampling', '--tool', 'test_error_handling', '--call', 'test_error_handling'])
      const r = row(report, '2025-11-25 test_sampling missing-required')
      expect(r.grade).toBe('fails')
      expect(r.why).toContain('sent sampling/createMessage to a client that declared no such capability')
      expect(r.rule).toContain('Lifecycle §Operation')
      expect(r.answered).toMatch(/error -32601 .*\(after sampling\/createMessage\)$/)
      // the canary travels in the sampling request (to the client), not in the answer: no echo
      expect(row(report, '2025-11-25 test_sampling wrong-type').why).not.toContain('echoed')
      // an honest isError failure passes
      const honest = row(report, '2025-11-25 test_error_handling valid-call')
      expect(honest.grade).toBe('pass')
      expect(honest.why).toBe('the tool failed and said so (isError: true)')
    } finally {
      await withFixtures.close()
    }
  })
})
