/**
 * src/core/access/resource-server.ts: which scopes the edge shows. The metadata's
 * `scopes_supported` holds only scopes a visible tool can need (an entry every filter hides,
 * such as `admin_*` under `TOOLS_DENY=admin_*`, is left out), and the 401 challenge names the
 * base scope (the entries matching every tool name).
 */
import { describe, expect, it } from 'vitest'
import { edgeAuth, shownScopes, type FilterLayers } from '../../../src/core/access/resource-server'
import { parseToolScopes } from '../../../src/core/access/tool-scopes'

const SCOPES = parseToolScopes('{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"],"get_*":"mcp:read"}')
const layer = (allow: string[], deny: string[]) => ({ allow, deny })

describe('shownScopes', () => {
  it.each<[string, FilterLayers[], string[]]>([
    ['no filter', [[layer([], [])]], ['mcp:admin', 'mcp:read', 'mcp:tools']],
    ['TOOLS_DENY=admin_* hides every admin tool', [[layer([], ['admin_*'])]], ['mcp:read', 'mcp:tools']],
    ['a narrower deny (admin_drop) leaves other admin tools', [[layer([], ['admin_drop'])]], ['mcp:admin', 'mcp:read', 'mcp:tools']],
    ['TOOLS_ALLOW=echo,get_* meets no admin tool', [[layer(['echo', 'get_*'], [])]], ['mcp:read', 'mcp:tools']],
    ['TOOLS_DENY=* hides everything', [[layer([], ['*'])]], []],
    ['one origin hides admin_*, another shows it', [[layer([], ['admin_*'])], [layer([], []), layer([], [])]], ['mcp:admin', 'mcp:read', 'mcp:tools']],
    ['the global lists and an origin own list together', [[layer([], ['get_*']), layer([], ['admin_*'])]], ['mcp:tools']],
    ['no origin (a library edge without ORIGIN_URL): nothing known to be hidden', [], ['mcp:admin', 'mcp:read', 'mcp:tools']],
  ])('%s', (_what, filters, supported) => {
    expect(shownScopes(SCOPES, filters).supported).toEqual(supported)
  })

  it('the base scope: the scopes of the entries that match every tool name', () => {
    expect(shownScopes(SCOPES, []).base).toEqual(['mcp:tools'])
    expect(shownScopes(parseToolScopes('{"*":["a","b"],"x_*":"c"}'), []).base).toEqual(['a', 'b'])
    expect(shownScopes(parseToolScopes('{"get_*":"r","admin_*":"w"}'), []).base).toEqual([])
    expect(shownScopes(parseToolScopes('{"*":"t"}'), [[layer([], ['*'])]]).base).toEqual([])
  })

  it('edgeAuth writes the metadata from the visible scopes and keeps the base scope for the challenge', () => {
    const auth = edgeAuth({
      issuer: 'https://as.example',
      audience: 'https://edge.example/mcp',
      verifier: { verify: () => Promise.reject(new Error('unused')) },
      toolScopes: SCOPES,
      originAuthorization: null,
      filters: [[layer([], ['admin_*'])]],
    })
    expect(JSON.parse(auth.metadataText)).toEqual({
      resource: 'https://edge.example/mcp',
      authorization_servers: ['https://as.example'],
      scopes_supported: ['mcp:read', 'mcp:tools'],
      bearer_methods_supported: ['header'],
    })
    expect(auth.challengeScope).toEqual(['mcp:tools'])
  })
})
