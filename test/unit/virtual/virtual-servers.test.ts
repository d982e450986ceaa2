/**
 * The pure parts of virtual servers (docs/virtual-servers.md): the `VIRTUAL_SERVERS` rule and its
 * check against `ORIGINS` (one line naming every problem, as env and as typed option), the naming
 * rule of each prefix mode, the signed session id (forged, swapped, another server's or another
 * key's refused; the caller tag it carries with auth on), and the start-up line of a key made at start.
 */
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../../src/core/config'
import { resolveConfig } from '../../../src/edge-options'
import { mergeTools, originOfPrefixed } from '../../../src/core/virtual/merge-tools'
import { callerTag, issuingServer, mintSession, readSession, sessionKey } from '../../../src/core/virtual/session-token'
import { identityScopeKey } from '../../../src/core/validation/caller-scope'
import { startupRecords } from '../../../src/core/startup-report'

const ORIGINS = JSON.stringify({ weather: 'http://127.0.0.1:9001/mcp', files: 'http://127.0.0.1:9002/mcp' })

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError)
    return (e as Error).message
  }
  throw new Error('the configuration was accepted')
}

describe('VIRTUAL_SERVERS', () => {
  it('reads servers with their origins, prefix (default always) and page size (default 100)', () => {
    const c = loadConfig({ ORIGINS, VIRTUAL_SERVERS: '{"all":{"origins":["weather","files"]},"w":{"origins":["weather"],"prefix":"never","pageSize":5}}' })
    expect(c.virtualServers).toEqual({ all: { origins: ['weather', 'files'], prefix: 'always', pageSize: 100 }, w: { origins: ['weather'], prefix: 'never', pageSize: 5 } })
  })

  it('a name shared with ORIGINS and unknown origins stop the start with one line naming them all', () => {
    const m = refusal({ ORIGINS, VIRTUAL_SERVERS: '{"weather":{"origins":["weather"]},"all":{"origins":["weather","news","mail"]}}' })
    expect(m.split('\n')).toHaveLength(1)
    expect(m).toContain('VIRTUAL_SERVERS.weather: the name is an origin of ORIGINS too')
    expect(m).toContain('VIRTUAL_SERVERS.all.origins: news, mail are not names of ORIGINS (ORIGINS has weather, files)')
  })

  it('an empty list, a repeated origin, a bad prefix or name, or bad JSON are refused naming the part', () => {
    expect(refusal({ ORIGINS, VIRTUAL_SERVERS: '{"all":{"origins":[]}}' })).toBe(
      'VIRTUAL_SERVERS.all.origins=[]: expected a non-empty list of names of ORIGINS (a virtual server needs at least one origin)'
    )
    expect(refusal({ ORIGINS, VIRTUAL_SERVERS: '{"all":{"origins":["files","files"]}}' })).toContain('files is listed twice')
    expect(refusal({ ORIGINS, VIRTUAL_SERVERS: '{"all":{"origins":["files"],"prefix":"sometimes"}}' })).toBe(
      'VIRTUAL_SERVERS.all.prefix="sometimes": expected one of always, conditional, never'
    )
    expect(refusal({ ORIGINS, VIRTUAL_SERVERS: '{"a/b":{"origins":["files"]}}' })).toContain("virtual server names of letters, digits, '_', '.', '~' and '-'")
    expect(refusal({ ORIGINS, VIRTUAL_SERVERS: '{"all":' })).toContain('this is not valid JSON')
  })

  it('a missing origins list, or a page size JSON reads as Infinity, is named as it is (not as "" or null)', () => {
    expect(refusal({ ORIGINS, VIRTUAL_SERVERS: '{"all":{}}' })).toBe('VIRTUAL_SERVERS={"all":{}}: expected a list of names of ORIGINS for virtual server all (its "origins")')
    expect(refusal({ ORIGINS, VIRTUAL_SERVERS: '{"all":{"origins":["files"],"pageSize":1e400}}' })).toBe(
      'VIRTUAL_SERVERS.all.pageSize=Infinity: expected an integer from 1 to 1000'
    )
  })

  it('as a typed option, the same rule names the option', () => {
    expect(() => resolveConfig({ origins: { files: 'http://127.0.0.1:9002/mcp' }, virtualServers: { all: { origins: ['files', 'nope'] } } })).toThrow(
      'virtualServers (VIRTUAL_SERVERS).all.origins: nope is not a name of origins (ORIGINS) (origins (ORIGINS) has files)'
    )
  })

  it('VIRTUAL_SESSION_KEY is a secret of at least 32 characters, never shown', () => {
    const m = refusal({ ORIGINS, VIRTUAL_SESSION_KEY: 'short-secret-value' })
    expect(m).not.toContain('short-secret-value')
    expect(m).toContain('VIRTUAL_SESSION_KEY (value not shown)')
  })

  it('without VIRTUAL_SESSION_KEY the start says that sessions hold on this process only', () => {
    const c = loadConfig({ ORIGINS, VIRTUAL_SERVERS: '{"all":{"origins":["files"]}}' })
    const line = startupRecords(c, {}, 'memory').find((r) => r.msg === 'virtual.session_key_generated')
    expect(line).toMatchObject({ level: 'warn', servers: ['all'] })
    expect(String(line!.text)).toContain('replicas behind one balancer need a shared key')
    const keyed = loadConfig({ ORIGINS, VIRTUAL_SERVERS: '{"all":{"origins":["files"]}}', VIRTUAL_SESSION_KEY: 'k'.repeat(32) })
    expect(startupRecords(keyed, {}, 'memory').find((r) => r.msg === 'virtual.session_key_generated')).toBeUndefined()
  })
})

describe('the naming rule', () => {
  const lists = [
    { origin: 'files', tools: [{ name: 'read' }, { name: 'search', inputSchema: { type: 'object' } }] },
    { origin: 'web', tools: [{ name: 'search' }, { name: 'fetch' }] },
  ]
  it('always: every tool prefixed, its definition kept with the merged name', () => {
    const m = mergeTools('always', lists)
    expect(m.tools.map((t) => t.name)).toEqual(['files__read', 'files__search', 'web__search', 'web__fetch'])
    expect(m.byName.get('files__search')).toMatchObject({ origin: 'files', originName: 'search', definition: { name: 'files__search', inputSchema: { type: 'object' } } })
    expect(m.collisions).toEqual([])
  })
  it('conditional: only the shared name, on each origin', () => {
    expect(mergeTools('conditional', lists).tools.map((t) => t.name)).toEqual(['read', 'files__search', 'web__search', 'fetch'])
  })
  it('never: the shared name left out and reported', () => {
    const m = mergeTools('never', lists)
    expect(m.tools.map((t) => t.name)).toEqual(['read', 'fetch'])
    expect(m.collisions).toEqual(['search'])
  })
  it('a merged name that still repeats is kept once: the one the rule prefixed, else the first; the longest origin prefix wins', () => {
    const m = mergeTools('conditional', [
      { origin: 'a', tools: [{ name: 'b__y' }, { name: 'y' }] },
      { origin: 'b', tools: [{ name: 'x' }, { name: 'y' }] },
    ])
    // b's `y`, prefixed to `b__y`, keeps its name: a's own `b__y`, listed first, never takes it.
    expect(m.tools.map((t) => `${t.origin}:${t.name}`)).toEqual(['a:a__y', 'b:x', 'b:b__y'])
    expect(m.byName.get('b__y')).toMatchObject({ origin: 'b', originName: 'y' })
    expect(m.shadowed).toEqual(['a:b__y'])
    // Both prefixed (origins a and a_): the first in order.
    const p = mergeTools('always', [
      { origin: 'a', tools: [{ name: '_x' }] },
      { origin: 'a_', tools: [{ name: 'x' }] },
    ])
    expect(p.tools.map((t) => `${t.origin}:${t.name}`)).toEqual(['a:a___x'])
    expect(p.shadowed).toEqual(['a_:x'])
    expect(originOfPrefixed('a_b__t', ['a', 'a_b'])).toEqual({ origin: 'a_b', originName: 't' })
    expect(originOfPrefixed('t', ['a'])).toBeUndefined()
  })
})

describe('the session id', () => {
  const session = { server: 'all', backends: { files: { era: '2025-11-25' as const, sessionId: 'abc-123' }, web: { era: '2026-07-28' as const } } }
  it('reads back what it carries, on the server that issued it, under the same key', async () => {
    const key = await sessionKey('k'.repeat(32))
    const token = await mintSession(key, session)
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    expect(await readSession(key, token, 'all')).toEqual(session)
    // Another edge with the same key reads it too (no shared store).
    expect(await readSession(await sessionKey('k'.repeat(32)), token, 'all')).toEqual(session)
  })
  it('refuses another server, another key, an altered payload and a payload swapped from another session', async () => {
    const key = await sessionKey('k'.repeat(32))
    const token = await mintSession(key, session)
    expect(await readSession(key, token, 'other')).toBeNull()
    expect(await readSession(await sessionKey('j'.repeat(32)), token, 'all')).toBeNull()
    expect(await readSession(await sessionKey(null), token, 'all')).toBeNull()
    const [v, payload, mac] = token.split('.')
    const forged = Buffer.from(JSON.stringify({ v: 'all', b: { files: ['2025-11-25', 'someone-elses'] } })).toString('base64url')
    expect(await readSession(key, `${v}.${forged}.${mac}`, 'all')).toBeNull()
    const other = await mintSession(key, { server: 'all', backends: { files: { era: '2025-11-25', sessionId: 'xyz' } } })
    expect(await readSession(key, `${v}.${other.split('.')[1]}.${mac}`, 'all')).toBeNull()
    expect(await readSession(key, `${v}.${payload}`, 'all')).toBeNull()
    expect(await readSession(key, 'not a session', 'all')).toBeNull()
    // Another spelling of the same MAC bytes (the last character's unused low bits set) is not this session.
    const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const respelled = `${v}.${payload}.${mac!.slice(0, -1)}${digits[digits.indexOf(mac!.at(-1)!) ^ 1]}`
    expect(Buffer.from(respelled.split('.')[2]!, 'base64url')).toEqual(Buffer.from(mac!, 'base64url'))
    expect(await readSession(key, respelled, 'all')).toBeNull()
    expect(await readSession(key, token, 'all')).not.toBeNull()
    // The origin routes still know it for what it is (and refuse it).
    expect(await issuingServer(key, respelled)).toBe('all')
  })
  it('carries the caller tag it was issued with; the tag depends on issuer, sub and client, is keyed, and hides the caller', async () => {
    const key = await sessionKey('k'.repeat(32))
    const id = (sub: string, clientId: string | null = 'c1') => identityScopeKey({ sub, clientId, scopes: new Set() })
    const tag = await callerTag(key, 'https://as.example', id('alice'))
    expect(tag).toMatch(/^[A-Za-z0-9_-]{22}$/)
    // The same caller (whatever its token) gets the same tag, on any replica with the key.
    expect(await callerTag(await sessionKey('k'.repeat(32)), 'https://as.example', id('alice'))).toBe(tag)
    const others = await Promise.all([
      callerTag(key, 'https://as.example', id('bob')),
      callerTag(key, 'https://as.example', id('alice', 'c2')),
      callerTag(key, 'https://as.example', id('alice', null)),
      callerTag(key, 'https://other.example', id('alice')),
      callerTag(await sessionKey('j'.repeat(32)), 'https://as.example', id('alice')),
    ])
    expect(new Set([tag, ...others]).size).toBe(6)
    const token = await mintSession(key, { ...session, caller: tag })
    expect(await readSession(key, token, 'all')).toEqual({ ...session, caller: tag })
    expect(Buffer.from(token.split('.')[1]!, 'base64url').toString()).not.toContain('alice')
    // The tag is under the MAC: swapped for another, the id is not ours.
    const [v, , mac] = token.split('.')
    const swapped = Buffer.from(JSON.stringify({ v: 'all', b: { files: ['2025-11-25', 'abc-123'], web: ['2026-07-28'] }, c: others[0] })).toString('base64url')
    expect(await readSession(key, `${v}.${swapped}.${mac}`, 'all')).toBeNull()
  })
  it('names the virtual server that issued it, for any server of the edge; null for an id it did not sign', async () => {
    const key = await sessionKey('k'.repeat(32))
    const token = await mintSession(key, session)
    expect(await issuingServer(key, token)).toBe('all')
    expect(await issuingServer(await sessionKey('j'.repeat(32)), token)).toBeNull()
    expect(await issuingServer(key, token.slice(0, -2))).toBeNull()
    expect(await issuingServer(key, 'v1.abc.def')).toBeNull()
  })
})
