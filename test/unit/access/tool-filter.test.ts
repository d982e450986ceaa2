/** src/core/access/tool-filter.ts: TOOLS_ALLOW / TOOLS_DENY parsing and messages, deny wins, empty allow means all, the tools/list result filter keeps every other member. */
import { describe, expect, it } from 'vitest'
import { filterToolListResult, parseToolFilter, parseToolPatterns, toolFilter, MAX_PATTERNS } from '../../../src/core/access/tool-filter'
import { ConfigError } from '../../../src/core/config'

function errorOf(f: () => unknown): ConfigError {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return e as ConfigError
  }
  throw new Error('did not throw')
}

describe('parseToolPatterns', () => {
  it('reads names and globs, trims around commas, drops duplicates', () => {
    expect(parseToolPatterns('TOOLS_ALLOW', ' get_* , search,search ').map((p) => p.source)).toEqual(['get_*', 'search'])
  })
  it('unset or blank is an empty list', () => {
    expect(parseToolPatterns('TOOLS_ALLOW', undefined)).toEqual([])
    expect(parseToolPatterns('TOOLS_ALLOW', '  ')).toEqual([])
  })
  it('an empty entry names the variable and its position', () => {
    const e = errorOf(() => parseToolPatterns('TOOLS_DENY', 'a,,b'))
    expect(e.message).toBe(
      'TOOLS_DENY: entry 2 (empty) is an empty name; expected comma-separated tool names or globs (* any run of characters, ? one character), such as get_*,search'
    )
    expect(e.variable).toBe('TOOLS_DENY')
  })
  it('an entry with a space inside names the entry', () => {
    expect(errorOf(() => parseToolPatterns('ORIGINS[2].toolsAllow', 'get_forecast,run query')).message).toMatch(
      /^ORIGINS\[2\]\.toolsAllow: entry 2 \(run query\) is whitespace, a control character, a comma or a quote; expected /
    )
  })
  it('a control character is shown escaped, never raw', () => {
    const e = errorOf(() => parseToolPatterns('TOOLS_ALLOW', 'a\u0007b'))
    expect(e.message).toContain('(a\\u0007b)')
    expect(e.message).not.toContain('\u0007')
  })
  it('too many entries', () => {
    expect(errorOf(() => parseToolPatterns('TOOLS_ALLOW', Array.from({ length: MAX_PATTERNS + 1 }, (_, i) => `t${i}`).join(','))).message).toMatch(
      /at most 1000 entries \(1001 given\)/
    )
  })
})

describe('isToolVisible', () => {
  it('no lists: everything visible, passAll', () => {
    const f = parseToolFilter({})
    expect(f.passAll).toBe(true)
    expect(f.isToolVisible('anything')).toBe(true)
  })
  it('allow list only: just those', () => {
    const f = parseToolFilter({ TOOLS_ALLOW: 'get_*,echo' })
    expect(['get_forecast', 'echo', 'echo2', 'run_query'].map((n) => f.isToolVisible(n))).toEqual([true, true, false, false])
  })
  it('deny list only: all but those', () => {
    const f = parseToolFilter({ TOOLS_DENY: '*_admin,drop_table' })
    expect(['db_admin', 'drop_table', 'get_forecast'].map((n) => f.isToolVisible(n))).toEqual([false, false, true])
  })
  it('deny wins over allow, for names and globs', () => {
    const f = parseToolFilter({ TOOLS_ALLOW: 'db_*,exact', TOOLS_DENY: 'db_drop*,exact' })
    expect(['db_read', 'db_drop_table', 'exact'].map((n) => f.isToolVisible(n))).toEqual([true, false, false])
  })
  it('custom variable names (per origin)', () => {
    const f = parseToolFilter({ A: 'x' }, { allow: 'A', deny: 'D' })
    expect(f.isToolVisible('x')).toBe(true)
    expect(f.isToolVisible('y')).toBe(false)
  })
})

describe('filterToolListResult', () => {
  const tools = [{ name: 'get_forecast' }, { name: 'db_admin' }, { name: 'echo' }]
  it('drops hidden tools, keeps nextCursor, _meta and the cache hints', () => {
    const f = parseToolFilter({ TOOLS_DENY: 'db_*' })
    const result = { tools, nextCursor: 'c2', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'o' } }, ttlMs: 5, cacheScope: 'public' }
    const out = filterToolListResult(f, result)
    expect(out.removed).toBe(1)
    expect(out.result).toEqual({ ...result, tools: [{ name: 'get_forecast' }, { name: 'echo' }] })
    expect(result.tools).toHaveLength(3) // the input is not changed
  })
  it('an emptied page keeps its cursor', () => {
    const out = filterToolListResult(parseToolFilter({ TOOLS_ALLOW: 'none_such' }), { tools, nextCursor: 'c2' })
    expect(out.result).toEqual({ tools: [], nextCursor: 'c2' })
  })
  it('nothing removed: the same object', () => {
    const result = { tools }
    expect(filterToolListResult(parseToolFilter({ TOOLS_DENY: 'zzz' }), result).result).toBe(result)
    expect(filterToolListResult(parseToolFilter({}), result).result).toBe(result)
  })
  it('entries without a string name: kept with a deny list only, dropped with an allow list', () => {
    const odd = { tools: [{ name: 7 }, null, { name: 'echo' }] }
    expect(filterToolListResult(toolFilter({ deny: parseToolPatterns('D', 'x') }), odd).removed).toBe(0)
    expect(filterToolListResult(toolFilter({ allow: parseToolPatterns('A', 'echo') }), odd).result).toEqual({ tools: [{ name: 'echo' }] })
  })
  it('a result that is not a tool list is returned unchanged', () => {
    const f = parseToolFilter({ TOOLS_DENY: 'x' })
    for (const r of [null, 'text', [1], { tools: 'no' }, {}]) expect(filterToolListResult(f, r)).toEqual({ result: r, removed: 0 })
  })
})
