/**
 * `mcp-edge check` against a server that speaks only 2024-11-05: the archived
 * @modelcontextprotocol/server-slack 2025.4.25 (SDK 1.0.1, stdio) behind a plain message relay
 * (../helpers/stdio-session-relay.ts), directly and through the edge. Every 2025 offer is answered
 * 2024-11-05, so check adds 2024-11-05 to its versions and grades the server there, by the rules
 * the edge serves such sessions with (docs/protocol-rules.md §7).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import { startStdioRelay, type StdioRelay } from '../helpers/stdio-session-relay'
import { checkJson, row, type JsonReport } from '../helpers/check-cli'

let slack: StdioRelay
let edge: RunningEdge
let report: JsonReport

beforeAll(async () => {
  slack = await startStdioRelay({ pkg: '@modelcontextprotocol/server-slack', bin: 'dist/index.js', env: { SLACK_BOT_TOKEN: 'xoxb-test', SLACK_TEAM_ID: 'T0TEST' } })
  edge = await startEdge({ port: 0, env: { ORIGIN_URL: slack.url, STORE_FILE: 'memory' }, log: () => undefined })
  report = (await checkJson(slack.url, ['--through', edge.url, '--tool', 'slack_post_message', '--call', 'slack_post_message'])).report
}, 120_000)
afterAll(async () => {
  await edge?.close()
  await slack?.close()
})

describe('check against a 2024-11-05 server', () => {
  it('offers each 2025 version, is answered 2024-11-05, and grades the server in 2024-11-05', () => {
    expect(report.versions).toEqual([
      { version: '2026-07-28', negotiated: '2024-11-05', skipped: 'the server answered 2024-11-05' },
      { version: '2025-11-25', negotiated: '2024-11-05', skipped: 'the server answered 2024-11-05' },
      { version: '2025-06-18', negotiated: '2024-11-05', skipped: 'the server answered 2024-11-05' },
      { version: '2025-03-26', negotiated: '2024-11-05', skipped: 'the server answered 2024-11-05' },
      { version: '2024-11-05', negotiated: '2024-11-05' },
    ])
    const handshake = row(report, '2024-11-05 * handshake')
    expect(handshake.grade).toBe('pass')
    expect(handshake.answered).toContain('protocolVersion 2024-11-05, server Slack MCP Server')
    expect(handshake.through?.grade).toBe('pass')
    expect(row(report, '2024-11-05 * tools-list').answered).toBe('8 tools')
    expect(row(report, '2024-11-05 * tools-list').through?.answered).toBe('8 tools')
    // Rules 2024-11-05 does not have are not asked of it: no version header, no batches.
    const cases = new Set(report.rows.filter((r) => r.version === '2024-11-05').map((r) => r.case))
    expect(cases.has('version-header')).toBe(false)
    expect(cases.has('batch')).toBe(false)
    // Transport rows cite the 2025-03-26 page the edge applies to such sessions.
    expect(row(report, '2024-11-05 * notification').rule).toContain('MCP 2025-03-26 Transports §Sending Messages to the Server (applied to 2024-11-05 sessions on Streamable HTTP)')
  })

  it('shows what the server hides and the edge fixes: refusals as {"error": ...} successes, answered -32602 through the edge', () => {
    for (const c of ['missing-required', 'wrong-type']) {
      const r = row(report, `2024-11-05 slack_post_message ${c}`)
      expect(r.grade, c).toBe('misleads')
      expect(r.answered, c).toMatch(/^HTTP 200 sse: result "\{\\"error\\"/)
      expect(r.why, c).toContain('hidden in a result without isError')
      expect(r.through?.grade, c).toBe('pass')
      expect(r.through?.answered, c).toMatch(/^HTTP 200 json: error -32602 "Invalid arguments for tool \\"slack_post_message\\"/)
    }
    const valid = row(report, '2024-11-05 slack_post_message valid-call')
    expect(valid.grade).toBe('misleads')
    expect(valid.answered).toBe('HTTP 200 sse: result "{\\"error\\":\\"fetch failed\\"}"')
    expect(valid.through?.grade).toBe('pass')
    expect(valid.through?.answered).toBe('HTTP 200 sse: result isError "{\\"error\\":\\"fetch failed\\"}"')
    expect(row(report, '2024-11-05 * unknown-tool').through?.answered).toMatch(/^HTTP 200 json: error -32602/)
  })
})
