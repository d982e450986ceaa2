/**
 * `mcp-edge check` grades a virtual server like any server (it is one): the demo origin (SDK v1,
 * stateful, with deliberate red fixtures) and a stateless 2026-07-28 SDK v2 origin behind one
 * virtual server on the Node edge. Every version speaks, no row misleads or fails the spec, and the
 * rows the demo origin fails directly (no argument validation) pass through the virtual server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import { checkJson, row, type JsonReport } from '../helpers/check-cli'
import { startModernOrigin, type TestOrigin } from './backends'

let demo: RunningOrigin
let modern: TestOrigin
let edge: RunningEdge
let report: JsonReport
let code: number | null

beforeAll(async () => {
  demo = await startDemoOrigin()
  modern = await startModernOrigin('modern', ['lookup'])
  edge = await startEdge({
    port: 0,
    env: {
      STORE_FILE: 'memory',
      ORIGINS: JSON.stringify({ demo: demo.url, modern: modern.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['demo', 'modern'] } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(32),
    },
    log: () => undefined,
  })
  const r = await checkJson(`${edge.url}/all`, ['--call', 'demo__get_forecast'])
  report = r.report
  code = r.run.code
})

afterAll(async () => {
  await edge?.close()
  await demo?.close()
  await modern?.close()
})

describe('check against a virtual server', () => {
  it('speaks every version, and nothing misleads or fails the spec', () => {
    expect(report.versions.map((v) => v.negotiated ?? v.version)).toEqual(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'])
    expect(report.rows.filter((r) => r.grade === 'misleads' || r.grade === 'fails').map((r) => `${r.id}: ${r.answered} | ${r.why}`)).toEqual([])
    expect(code).toBe(0)
  })

  it("the demo origin's unvalidated tools are validated through the virtual server, under their merged names", () => {
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      expect(row(report, `${v} demo__get_forecast missing-required`).grade).toBe('pass')
      expect(row(report, `${v} demo__create_order wrong-type`).grade).toBe('pass')
    }
    expect(row(report, '2026-07-28 modern__lookup missing-required').grade).toBe('pass')
  })
})
