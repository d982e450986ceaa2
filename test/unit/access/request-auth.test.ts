/**
 * The pure parts of the front door's token check: the origin-bound header view (the client's
 * Authorization never visible through it), the cache's synchronous hit (peek), the private-scope
 * key of a verified identity, and the per-tool scope denial's text.
 */
import { describe, expect, it } from 'vitest'
import { applyScopes } from '../../../src/core/access/apply-scopes'
import type { TokenVerifier } from '../../../src/core/access/bearer'
import { parseToolScopes } from '../../../src/core/access/tool-scopes'
import { cachedVerifier } from '../../../src/core/access/verified-token-cache'
import { OriginBoundHeaders } from '../../../src/core/request-auth'
import { identityScopeKey } from '../../../src/core/validation/caller-scope'

describe('OriginBoundHeaders', () => {
  it('replaces Authorization in get and forEach, keeps the rest; none at all without a credential', () => {
    const client = new Headers({ authorization: 'Bearer client-token', accept: 'application/json', 'mcp-session-id': 's' })
    const seen = (h: OriginBoundHeaders) => {
      const out: Record<string, string> = {}
      h.forEach((v, n) => (out[n] = v))
      return out
    }
    const edge = new OriginBoundHeaders(client, 'Bearer edge')
    expect([edge.get('authorization'), edge.get('Authorization'), edge.get('accept')]).toEqual(['Bearer edge', 'Bearer edge', 'application/json'])
    expect(seen(edge)).toEqual({ accept: 'application/json', 'mcp-session-id': 's', authorization: 'Bearer edge' })
    const none = new OriginBoundHeaders(client, null)
    expect(none.get('authorization')).toBeNull()
    expect(JSON.stringify(seen(none))).not.toContain('client-token')
  })
})

describe('the verified-token cache without awaiting', () => {
  it('peek gives a copy of an accepted, unexpired token only', async () => {
    let now = 1_000_000
    const inner: TokenVerifier = {
      verify: async (t) =>
        t === 'good' ? { ok: true, identity: { sub: 'u', clientId: null, scopes: new Set(['a']) } } : { ok: false, failure: { code: 'malformed', message: 'm' } },
    }
    const c = cachedVerifier(inner, { now: () => now, expiryOf: () => 2_000 })
    expect(c.peek('good')).toBeUndefined()
    await c.verify('good')
    await c.verify('bad')
    const hit = c.peek('good')!
    expect(hit).toEqual({ sub: 'u', clientId: null, scopes: new Set(['a']) })
    hit.scopes.add('b')
    expect(c.peek('good')!.scopes).toEqual(new Set(['a']))
    expect(c.peek('bad')).toBeUndefined()
    now = 2_000_000
    expect(c.peek('good')).toBeUndefined()
  })
})

describe('the verified-token cache on Workers (shareInFlight: false)', () => {
  it('concurrent checks of one token each verify on their own; by default they share one', async () => {
    let calls = 0
    const inner: TokenVerifier = { verify: async () => (calls++, { ok: true, identity: { sub: 'u', clientId: null, scopes: new Set() } }) }
    const alone = cachedVerifier(inner, { shareInFlight: false, expiryOf: () => Date.now() / 1000 + 60 })
    await Promise.all([alone.verify('t'), alone.verify('t')])
    expect(calls).toBe(2)
    calls = 0
    const shared = cachedVerifier(inner, { expiryOf: () => Date.now() / 1000 + 60 })
    await Promise.all([shared.verify('t'), shared.verify('t')])
    expect(calls).toBe(1)
  })
})

describe('identityScopeKey', () => {
  it('differs for every sub / client pair and from any header value', () => {
    const k = (sub: string, clientId: string | null) => identityScopeKey({ sub, clientId, scopes: new Set() })
    const keys = [k('a', 'b'), k('a\nb', null), k('a', null), k('a', ''), k('a\n+b', null), k('ab', null)]
    expect(new Set(keys).size).toBe(keys.length)
    for (const key of keys) expect(key.startsWith('\n')).toBe(true)
  })
})

describe('applyScopes', () => {
  const scopes = parseToolScopes('{"*":"mcp:tools","admin_*":["mcp:admin"]}')
  const id = { raw: '4', key: 'n:4' }
  it('null with the scopes, without auth, or for a non-string name; else the 403 with every needed scope', () => {
    const who = (s: string[]) => ({ sub: 'u', clientId: null, scopes: new Set(s) })
    expect(applyScopes(scopes, who(['mcp:tools', 'mcp:admin']), id, 'admin_x', 'https://h/.well-known/oauth-protected-resource/mcp')).toBeNull()
    expect(applyScopes(scopes, undefined, id, 'admin_x', 'u')).toBeNull()
    expect(applyScopes(scopes, who([]), id, 42, 'u')).toBeNull()
    const d = applyScopes(scopes, who(['mcp:tools']), id, 'admin_x', 'https://h/.well-known/oauth-protected-resource/mcp')!
    expect(d.error.message).toBe(
      'The tool admin_x needs the scopes mcp:admin mcp:tools; this access token lacks mcp:admin. Ask the authorization server for a token with these scopes (the 403 challenge names them in scope) and call again.'
    )
    expect(d.headers['www-authenticate']).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp:admin mcp:tools", resource_metadata="https:\/\/h\/\.well-known\/oauth-protected-resource\/mcp", error_description="The tool admin_x/
    )
    const one = applyScopes(scopes, who([]), id, 'echo', 'u')!
    expect(one.error.message).toBe(
      'The tool echo needs the scope mcp:tools; this access token lacks mcp:tools. Ask the authorization server for a token with this scope (the 403 challenge names it in scope) and call again.'
    )
  })
})
