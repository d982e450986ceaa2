/** src/core/access/tool-scopes.ts: TOOL_SCOPES parsing and messages, union of matching entries, missing scopes, scopes_supported. */
import { describe, expect, it } from 'vitest'
import { parseToolScopes } from '../../../src/core/access/tool-scopes'
import { ConfigError } from '../../../src/core/config'

function message(value: string): string {
  try {
    parseToolScopes(value)
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    expect((e as ConfigError).variable).toBe('TOOL_SCOPES')
    return (e as Error).message
  }
  throw new Error('did not throw')
}

describe('parseToolScopes', () => {
  const ts = parseToolScopes('{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"],"admin_drop":"mcp:danger","get_?":["read"]}')
  it('a tool needs the union of every matching entry, sorted', () => {
    expect(ts.requiredScopes('admin_drop')).toEqual(['mcp:admin', 'mcp:danger', 'mcp:tools'])
    expect(ts.requiredScopes('admin_list')).toEqual(['mcp:admin', 'mcp:tools'])
    expect(ts.requiredScopes('get_x')).toEqual(['mcp:tools', 'read'])
    expect(ts.requiredScopes('echo')).toEqual(['mcp:tools'])
  })
  it('missingScope: the scopes lacking, or null', () => {
    expect(ts.missingScope(new Set(['mcp:tools']), 'admin_list')).toEqual(['mcp:admin'])
    expect(ts.missingScope(new Set(['mcp:tools', 'mcp:admin']), 'admin_list')).toBeNull()
    expect(ts.missingScope(new Set(), 'echo')).toEqual(['mcp:tools'])
  })
  it('allScopes for scopes_supported', () => {
    expect(ts.allScopes).toEqual(['mcp:admin', 'mcp:danger', 'mcp:tools', 'read'])
  })
  it('no entry: nothing required', () => {
    const none = parseToolScopes(undefined)
    expect(none.empty).toBe(true)
    expect(none.missingScope(new Set(), 'x')).toBeNull()
    expect(none.allScopes).toEqual([])
    expect(parseToolScopes('{}').requiredScopes('x')).toEqual([])
  })
  it('a tool no entry matches needs nothing', () => {
    expect(parseToolScopes('{"db_*":"db"}').missingScope(new Set(), 'echo')).toBeNull()
  })
})

describe('TOOL_SCOPES messages', () => {
  it.each([
    ['{"*":', /^TOOL_SCOPES=\{"\*":: expected valid JSON: a JSON object from tool name or glob to a scope/],
    ['["a"]', /^TOOL_SCOPES=\["a"\]: expected a JSON object/],
    ['{"*":"two words"}', /^TOOL_SCOPES: entry "\*" maps to "two words", which is not a scope name \(printable ASCII without spaces, quotes or backslashes, RFC 6749 §3\.3\)/],
    ['{"x":["ok",""]}', /^TOOL_SCOPES: entry "x" has scope 2 \(""\), which is not a scope name/],
    ['{"x":["ok",3]}', /^TOOL_SCOPES: entry "x" has scope 2 \(a number\), which is not a scope name/],
    ['{"x":[]}', /^TOOL_SCOPES: entry "x" maps to neither a scope name nor a non-empty list of scope names/],
    ['{"x":{"a":1}}', /^TOOL_SCOPES: entry "x" maps to neither/],
    ['{"":"s"}', /^TOOL_SCOPES: entry "" has a tool pattern that is an empty name/],
    ['{"a b":"s"}', /^TOOL_SCOPES: entry "a b" has a tool pattern that is whitespace/],
  ])('%s', (value, re) => {
    expect(message(value)).toMatch(re)
  })
})
