/**
 * `mcp-edge check` in 2026-07-28 against packages/cli/demo/origin-v2.ts (SDK v2 `McpServer` behind
 * `createMcpHandler`: 2026-07-28 and, on its legacy leg, the 2025 revisions), directly and through
 * the edge. The handshake is the official SDK v2 client's `server/discover` probe; every case
 * carries the per-request envelope and the standard headers. The SDK v2 server validates
 * arguments itself, so every row passes both ways; an SDK v1 origin (packages/cli/demo/origin.ts) does not
 * speak 2026-07-28, and check says so with an info row instead of grading it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startV2Origin, type RunningV2Origin } from '../../packages/cli/demo/origin-v2'
import { startDemoOrigin, type RunningOrigin } from '../../packages/cli/demo/origin'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import { checkJson, row } from '../helpers/check-cli'

let v2: RunningV2Origin
let v1: RunningOrigin
let edge: RunningEdge

beforeAll(async () => {
  v2 = await startV2Origin()
  v1 = await startDemoOrigin()
  edge = await startEdge({ port: 0, env: { ORIGIN_URL: v2.url, STORE_FILE: 'memory' }, log: () => undefined })
})
afterAll(async () => {
  await edge?.close()
  await v2?.close()
  await v1?.close()
})

describe('check in 2026-07-28', () => {
  it('grades the SDK v2 origin in every version, directly and through the edge, with no failing row', async () => {
    const { run, report } = await checkJson(v2.url, ['--through', edge.url, '--call', 'add', '--strict'])
    expect(run.code).toBe(0)
    expect(report.versions.map((v) => v.negotiated)).toEqual(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'])
    for (const id of [
      '2026-07-28 * handshake',
      '2026-07-28 * tools-list',
      '2026-07-28 * header-mismatch',
      '2026-07-28 * envelope-missing',
      '2026-07-28 * version-header',
      '2026-07-28 add valid-call',
      '2026-07-28 add missing-required',
    ]) {
      const r = row(report, id)
      expect(r.grade, id).toBe('pass')
      expect(r.through?.grade, id).toBe('pass')
    }
    expect(row(report, '2026-07-28 * version-header').answered).toMatch(/^HTTP 400 json: error -32022/)
    expect(row(report, '2026-07-28 * header-mismatch').answered).toMatch(/^HTTP 400 json: error -32020/)
    expect(row(report, '2026-07-28 * handshake').answered).toContain('no session')
    expect(report.counts.fails).toBe(0)
    expect(report.counts.misleads).toBe(0)
  })

  it('an SDK v1 origin does not speak 2026-07-28: an info row, its 2025 versions graded', async () => {
    const { report } = await checkJson(v1.url, ['--version', '2026-07-28', '--version', '2025-06-18', '--tool', 'echo'])
    const h = row(report, '2026-07-28 * handshake')
    expect(h.grade).toBe('info')
    expect(h.why).toBe('the server does not speak 2026-07-28; its cases are skipped')
    expect(report.rows.filter((r) => r.version === '2026-07-28').map((r) => r.case)).toEqual(['handshake'])
    expect(row(report, '2025-06-18 echo wrong-type').grade).toBe('misleads')
  })
})
