/**
 * LOG_LEVEL: `warn` drops the `mcp.post` line of a POST whose ids were all answered and keeps
 * the lines that report a failure, on Node and on the Worker in workerd; metrics still count
 * every POST. `info` (the default) writes both. An unknown level stops the start with a message
 * naming the variable and the levels.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { sendJson, startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders, post, postLogs } from '../helpers/grading'
import { resolveConfig } from '../../src/edge-options'

const call = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', arguments: {} } })

describe.each(RUNTIMES)('LOG_LEVEL on $name', ({ start }) => {
  let origin: ScriptedOrigin
  const edges: EdgeUnderTest[] = []
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    // Answers id "ok-*" and leaves any other id unanswered (the edge answers it -31003).
    origin.handle((req, res) => {
      const id = (req.json as { id?: string } | undefined)?.id
      if (typeof id === 'string' && id.startsWith('ok-')) sendJson(res, { jsonrpc: '2.0', id, result: { content: [] } })
      else sendJson(res, { jsonrpc: '2.0', id: 'someone-else', result: { content: [] } })
    })
  })
  afterAll(async () => {
    for (const e of edges) await e.close()
    await origin?.close()
  })

  for (const level of ['warn', 'info'] as const) {
    it(`${level}: the answered POST ${level === 'warn' ? 'has no line' : 'has its line'}, the failed one has its line`, async () => {
      const edge = await start({ ORIGIN_URL: origin.url, LOG_LEVEL: level })
      edges.push(edge)
      expect((await post(edge, call('ok-1'), mcpHeaders())).status).toBe(200)
      const failed = await post(edge, call('lost-1'), mcpHeaders())
      expect(JSON.parse(failed.text)).toMatchObject({ id: 'lost-1', error: { code: -31003 } })
      // The failed POST's line is written after the answered one's: once it is there, every earlier line is too.
      const lines = await postLogs(edge, { where: (r) => JSON.stringify(r.grades).includes('lost-1') })
      const ids = lines.map((r) => (r.grades as { id: string }[])[0]!.id)
      expect(ids).toEqual(level === 'warn' ? ['"lost-1"'] : ['"ok-1"', '"lost-1"'])
      expect(lines.at(-1)!.level).toBe('warn')
      // Metrics count both POSTs whatever is logged.
      const metrics = await (await fetch(edge.url.replace(/\/mcp$/, '/metrics'))).text()
      expect(metrics).toMatch(/mcp_edge_grades_total\{[^}]*grade="unvalidated"[^}]*\} 1/)
      expect(metrics).toMatch(/mcp_edge_grades_total\{[^}]*grade="missing"[^}]*\} 1/)
    })
  }
})

describe('LOG_LEVEL values', () => {
  it('an unknown level names the variable and the levels', () => {
    expect(() => resolveConfig({ env: { ORIGIN_URL: 'http://127.0.0.1:9/mcp', LOG_LEVEL: 'verbose' } })).toThrow(/LOG_LEVEL.*info.*warn.*error/)
  })
})
