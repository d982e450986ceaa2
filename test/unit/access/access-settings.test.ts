/**
 * The access settings as the edge reads them (src/core/settings.ts rows, src/core/guards/request/tool-filter.ts):
 * TOOLS_ALLOW / TOOLS_DENY as variables and typed options, ORIGINS entries with their own lists
 * (errors naming ORIGINS.<name>.toolsDeny and the entry), how the global and per-origin lists
 * combine, RATE_LIMIT, and the Workers binding names.
 */
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../../src/core/config'
import { resolveConfig } from '../../../src/edge-options'
import { toolFilterOf } from '../../../src/core/guards/request/tool-filter'
import { bindingsFromEnv } from '../../../src/adapters/workers/rate-limit-binding'

function errorOf(f: () => unknown): ConfigError {
  try {
    f()
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return e as ConfigError
  }
  throw new Error('did not throw')
}

const URL1 = 'http://127.0.0.1:9000/mcp'

describe('TOOLS_ALLOW and TOOLS_DENY', () => {
  it('variables, and typed options as a string or a list', () => {
    const c = loadConfig({ TOOLS_ALLOW: 'get_*, search', TOOLS_DENY: 'get_secret' })
    expect(c.toolsAllow.map((p) => p.source)).toEqual(['get_*', 'search'])
    expect(c.toolsDeny.map((p) => p.source)).toEqual(['get_secret'])
    const t = resolveConfig({ access: { toolsAllow: ['a', 'b_*'], toolsDeny: 'c' } })
    expect(t.toolsAllow.map((p) => p.source)).toEqual(['a', 'b_*'])
    expect(t.toolsDeny.map((p) => p.source)).toEqual(['c'])
  })
  it('a bad entry is named with the variable or the option', () => {
    expect(errorOf(() => loadConfig({ TOOLS_DENY: 'a,,b' })).message).toMatch(/^TOOLS_DENY: entry 2 \(empty\) is an empty name; expected comma-separated tool names or globs/)
    expect(errorOf(() => resolveConfig({ access: { toolsAllow: ['ok', 'two words'] } })).message).toMatch(
      /^access\.toolsAllow \(TOOLS_ALLOW\): TOOLS_ALLOW: entry 2 \(two words\) is whitespace, a control character, a comma or a quote/
    )
    expect(errorOf(() => resolveConfig({ access: { toolsAllow: 5 as unknown as string } })).message).toBe(
      'access.toolsAllow=5 (TOOLS_ALLOW): expected a comma-separated string or a list of tool names or globs (* and ?)'
    )
  })
})

describe('ORIGINS with tool lists', () => {
  it('accepts the plain URL and the object form, lists as a string or an array', () => {
    const c = loadConfig({ ORIGINS: JSON.stringify({ a: URL1, b: { url: URL1, toolsAllow: 'get_*', toolsDeny: ['get_secret'] } }) })
    expect(c.origins.a).toEqual({ url: URL1, toolsAllow: [], toolsDeny: [] })
    expect(c.origins.b!.url).toBe(URL1)
    expect(c.origins.b!.toolsAllow.map((p) => p.source)).toEqual(['get_*'])
    expect(c.origins.b!.toolsDeny.map((p) => p.source)).toEqual(['get_secret'])
  })
  it('errors name ORIGINS.<name>.toolsDeny and the bad entry', () => {
    expect(errorOf(() => loadConfig({ ORIGINS: JSON.stringify({ files: { url: URL1, toolsDeny: 'delete_*,run query' } }) })).message).toMatch(
      /^ORIGINS\.files\.toolsDeny: entry 2 \(run query\) is whitespace, a control character, a comma or a quote; expected /
    )
    expect(errorOf(() => loadConfig({ ORIGINS: JSON.stringify({ files: { url: URL1, toolsDeny: 7 } }) })).message).toBe(
      'ORIGINS.files.toolsDeny=7: expected a comma-separated string or a list of tool names or globs (* and ?)'
    )
    expect(errorOf(() => loadConfig({ ORIGINS: JSON.stringify({ files: { url: 'ftp://x' } }) })).message).toMatch(/^ORIGINS\.files\.url=ftp:\/\/x: expected an http/)
    expect(errorOf(() => loadConfig({ ORIGINS: JSON.stringify({ files: { url: URL1, toolDeny: 'x' } }) })).message).toMatch(
      /^ORIGINS=.*: expected only url, toolsAllow and toolsDeny in origin files \(not toolDeny\)/
    )
    expect(errorOf(() => resolveConfig({ origins: { files: { url: URL1, toolsDeny: ['ok', ''] } } })).message).toMatch(
      /^origins \(ORIGINS\): ORIGINS\.files\.toolsDeny: entry 2 \(empty\) is an empty name/
    )
  })
  it('the global and per-origin lists narrow each other (deny in either hides; each allow list set must match)', () => {
    const c = loadConfig({
      TOOLS_ALLOW: 'get_*,search',
      TOOLS_DENY: 'get_secret',
      ORIGINS: JSON.stringify({ plain: URL1, narrow: { url: URL1, toolsAllow: 'get_*', toolsDeny: 'get_weather' } }),
    })
    const visible = (origin: string) => ['get_weather', 'get_time', 'get_secret', 'search', 'delete'].filter((n) => toolFilterOf(c, origin).isToolVisible(n))
    expect(visible('default')).toEqual(['get_weather', 'get_time', 'search'])
    expect(visible('plain')).toEqual(['get_weather', 'get_time', 'search'])
    expect(visible('narrow')).toEqual(['get_time'])
    expect(toolFilterOf(loadConfig({}), 'default').passAll).toBe(true)
  })
})

describe('RATE_LIMIT', () => {
  it('variable and typed option; unset is empty', () => {
    expect(loadConfig({}).rateLimits.empty).toBe(true)
    expect(loadConfig({ RATE_LIMIT: '60/min,search_*=2/s' }).rateLimits.budgets.map((b) => b.source)).toEqual(['60/min', 'search_*=2/s'])
    expect(resolveConfig({ access: { rateLimit: '5/s' } }).rateLimits.budgets.map((b) => b.source)).toEqual(['5/s'])
    expect(errorOf(() => loadConfig({ RATE_LIMIT: '60/hour' })).message).toMatch(/^RATE_LIMIT: entry 1 \(60\/hour\) has a unit that is not s or min; expected /)
  })
  it('on Workers each budget needs its binding, named RATE_LIMITER_<limit>_PER_<period>S', () => {
    const binding = { limit: async () => ({ success: true }) }
    const budgets = loadConfig({ RATE_LIMIT: '60/min,search_*=2/s' }).rateLimits.budgets
    expect(bindingsFromEnv({ RATE_LIMITER_60_PER_60S: binding, RATE_LIMITER_20_PER_10S: binding, OTHER: 'x' }, budgets).map((b) => [b.name, b.limit, b.periodS])).toEqual([
      ['RATE_LIMITER_60_PER_60S', 60, 60],
      ['RATE_LIMITER_20_PER_10S', 20, 10],
    ])
    expect(errorOf(() => bindingsFromEnv({ RATE_LIMITER_60_PER_60S: binding }, budgets)).message).toBe(
      'RATE_LIMIT budget search_*=2/s needs the Workers Rate Limiting binding RATE_LIMITER_20_PER_10S: add [[ratelimits]] name = "RATE_LIMITER_20_PER_10S", namespace_id = "<a number>", simple = { limit = 20, period = 10 } to wrangler.toml (found: RATE_LIMITER_60_PER_60S)'
    )
  })
})
