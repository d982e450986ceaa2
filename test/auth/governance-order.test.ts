/**
 * Auth, TOOL_SCOPES and tool filtering together, on both runtimes: the access gate runs before the
 * scope check, so a tool TOOLS_DENY hides reads as a tool the origin does not have, even to a
 * token that lacks the scope the tool would need (a 403 naming its scope would tell the client
 * the tool exists). And with auth on, the rate-limit caller is the verified token's `sub`: two
 * tokens of one subject share one budget (Node: the memory limiter).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { freePort, ORIGIN_CREDENTIAL, toolOrigin } from '../helpers/auth-edge'
import { startTokenIssuer, type TokenIssuer } from '../helpers/token-issuer'
import { mcpHeaders } from '../helpers/mcp'

describe.each(RUNTIMES)('auth, TOOL_SCOPES and TOOLS_DENY together on $name', ({ name, start }) => {
  let iss: TokenIssuer
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  let url: string
  beforeAll(async () => {
    iss = await startTokenIssuer({ alg: 'ES256' })
    origin = await startScriptedOrigin()
    toolOrigin(origin)
    const port = await freePort()
    url = `http://127.0.0.1:${port}/mcp`
    edge = await start(
      {
        ORIGIN_URL: origin.url,
        AUTH_ISSUER: iss.issuer,
        AUTH_AUDIENCE: url,
        AUTH_JWKS_URL: iss.jwksUrl,
        ORIGIN_AUTHORIZATION: ORIGIN_CREDENTIAL,
        TOOL_SCOPES: '{"*":"mcp:tools","admin_*":["mcp:tools","mcp:admin"]}',
        TOOLS_DENY: 'admin_*',
        ...(name === 'node' ? { RATE_LIMIT: '3/min' } : {}),
      },
      { port }
    )
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
    await iss?.stop()
  })

  const call = (id: number, tool: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: {} } })
  async function post(body: unknown, authorization: string) {
    const res = await fetch(url, { method: 'POST', headers: mcpHeaders('2025-06-18', { authorization }), body: JSON.stringify(body) })
    return { status: res.status, text: await res.text(), challenge: res.headers.get('www-authenticate') }
  }
  const token = (claims: Record<string, unknown> = {}) => iss.issue(url, { claims: { scope: 'mcp:tools', ...claims } })

  it('a hidden tool that needs a scope the token lacks is answered as a missing tool (200, the same bytes), not 403; tools/list leaves it out', async () => {
    origin.reset()
    const t = `Bearer ${await token({ sub: `order-${name}` })}`
    const hidden = await post(call(9, 'admin_drop'), t)
    const missing = await post(call(9, 'no_such_tool'), t)
    expect(hidden.status).toBe(200)
    expect(hidden.challenge).toBeNull()
    expect(hidden.text.replaceAll('admin_drop', 'X')).toBe(missing.text.replaceAll('no_such_tool', 'X'))
    expect(hidden.text).not.toContain('mcp:admin')
    expect(origin.forwarded().filter((q) => JSON.stringify(q.json).includes('admin_drop'))).toEqual([])
    const list = await post({ jsonrpc: '2.0', id: 10, method: 'tools/list' }, t)
    const names = (JSON.parse(list.text) as { result: { tools: { name: string }[] } }).result.tools.map((x) => x.name)
    expect(names).toEqual(['echo'])
  })

  it.runIf(name === 'node')('two tokens of one subject share its RATE_LIMIT budget; another subject has its own', async () => {
    const a1 = `Bearer ${await token({ sub: 'budget-user', jti: 'one' })}`
    const a2 = `Bearer ${await token({ sub: 'budget-user', jti: 'two' })}`
    const b = `Bearer ${await token({ sub: 'another-user' })}`
    expect((await post(call(1, 'echo'), a1)).status).toBe(200)
    expect((await post(call(2, 'echo'), a2)).status).toBe(200)
    expect((await post(call(3, 'echo'), a1)).status).toBe(200)
    const over = await post(call(4, 'echo'), a2)
    expect(over.status).toBe(429)
    expect(over.text).toContain('RATE_LIMIT')
    expect((await post(call(5, 'echo'), b)).status).toBe(200)
  })
})
