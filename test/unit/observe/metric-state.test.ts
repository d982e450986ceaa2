/**
 * The recording side of `/metrics` (src/observe/metric-state.ts): the counts of the grade,
 * request and POST series and the latency histograms, for runs of equal calls (the ids of one
 * batch, which count into the cells of the call before them) interleaved with other label sets
 * and origins, and past the series bound. Each count is checked against a plain tally of the
 * calls made.
 */
import { describe, expect, it } from 'vitest'
import { MAX_SERIES, type FamilySnapshot } from '../../../src/observe/metric-state'
import { TextMetrics } from '../../../src/observe/text-metrics'

/** The samples of family `name` as `label values joined by |` -> value. */
function tally(families: FamilySnapshot[], name: string): Record<string, number> {
  const f = families.find((x) => x.name === name)!
  return Object.fromEntries(f.samples.map((s) => [`${s.name}|${Object.values(s.labels).join('|')}`, s.value]))
}

describe('metric state', () => {
  it('counts every grade and request once, in runs and interleaved, per origin, method, tool and grade', () => {
    const m = new TextMetrics()
    const calls: [string, string, string | undefined, string][] = []
    // A batch of 10 equal ids, then alternating ids, another origin, an unknown method, no tool, the same tool name as a new string.
    for (let i = 0; i < 10; i++) calls.push(['default', 'tools/call', 'weather', 'ok'])
    for (let i = 0; i < 6; i++) calls.push(['default', 'tools/call', i % 2 ? 'weather' : 'search', i % 3 ? 'ok' : 'tool_error'])
    calls.push(['b', 'tools/call', 'weather', 'ok'], ['default', 'tools/call', 'weather', 'ok'], ['default', 'x/y', undefined, 'rejected'])
    calls.push(['default', 'tools/list', undefined, 'ok'], ['default', 'tools/call', ['wea', 'ther'].join(''), 'ok'], ['default', 'tools/call', undefined, 'ok'])
    for (const c of calls) m.countGrade(...c)
    const grades: Record<string, number> = {}
    const requests: Record<string, number> = {}
    for (const [o, meth, t, g] of calls) {
      const gk = `mcp_edge_grades_total|${o}|${t ?? '-'}|${g}`
      grades[gk] = (grades[gk] ?? 0) + 1
      const mk = `mcp_edge_requests_total|${o}|${meth === 'x/y' ? '_other' : meth}|${g}`
      requests[mk] = (requests[mk] ?? 0) + 1
    }
    const fams = m.families()
    expect(tally(fams, 'mcp_edge_grades_total')).toEqual(grades)
    expect(tally(fams, 'mcp_edge_requests_total')).toEqual(requests)
    expect(m.get('default', 'weather', 'ok')).toBe(14)
  })

  it('counts POSTs by origin and by who answered, and observes each in its origin histogram', () => {
    const m = new TextMetrics()
    const posts: [string, boolean][] = [
      ['default', true],
      ['default', true],
      ['default', false],
      ['b', true],
      ['default', true],
      ['b', false],
      ['b', false],
    ]
    for (const [origin, forwarded] of posts) m.observePost({ origin, edgeSeconds: 0.001, forwarded, ...(forwarded ? { originSeconds: 0.002 } : {}) })
    const fams = m.families()
    expect(tally(fams, 'mcp_edge_posts_total')).toEqual({
      'mcp_edge_posts_total|default|origin': 3,
      'mcp_edge_posts_total|default|edge': 1,
      'mcp_edge_posts_total|b|origin': 1,
      'mcp_edge_posts_total|b|edge': 2,
    })
    const edge = tally(fams, 'mcp_edge_added_latency_seconds')
    expect(edge['mcp_edge_added_latency_seconds_count|default']).toBe(4)
    expect(edge['mcp_edge_added_latency_seconds_count|b']).toBe(3)
    const origin = tally(fams, 'mcp_edge_origin_latency_seconds')
    expect(origin['mcp_edge_origin_latency_seconds_count|default']).toBe(3)
    expect(origin['mcp_edge_origin_latency_seconds_count|b']).toBe(1)
  })

  it(`past ${MAX_SERIES} label sets counts new ones with their last label _other, equal calls included`, () => {
    const m = new TextMetrics()
    for (let i = 0; i < MAX_SERIES; i++) m.countGrade('default', 'tools/call', `t${i}`, 'ok')
    m.countGrade('default', 'tools/call', 'new', 'ok')
    m.countGrade('default', 'tools/call', 'new', 'ok')
    m.countGrade('default', 'tools/call', 't0', 'ok')
    m.countGrade('default', 'tools/call', 'new', 'ok')
    const g = tally(m.families(), 'mcp_edge_grades_total')
    expect(g['mcp_edge_grades_total|default|new|_other']).toBe(3)
    expect(g['mcp_edge_grades_total|default|t0|ok']).toBe(2)
    expect(g['mcp_edge_grades_total|default|new|ok']).toBeUndefined()
  })
})
