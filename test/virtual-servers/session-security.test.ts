/**
 * What a virtual server's session id is good for, and where, on both runtimes (the Node entry and
 * the built Worker under Miniflare), with real SDK origins behind one virtual server:
 * - with auth on (a real token issuer on loopback), a session serves only the caller it was issued
 *   to (the verified `sub` and OAuth client, not the token: a refreshed token keeps it); any other
 *   caller gets exactly the 404 of an unknown session id, for POST, GET and DELETE, and the denial
 *   is logged as what it is;
 * - a virtual server's session id sent to an origin's own route never reaches that origin (it
 *   carries the other origins' session ids): 404 saying whose it is; an id the edge did not sign
 *   goes to the origin as before;
 * - a Worker with `VIRTUAL_SERVERS` and no `VIRTUAL_SESSION_KEY` refuses the configuration (each
 *   isolate would sign with its own key) with one log line naming the variable and the fix; Node
 *   keeps its key per process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../helpers/auth-edge'
import { RUNTIMES, startNodeEdge, startWorkerEdge, type EdgeUnderTest } from '../helpers/runtimes'
import { startTokenIssuer, type TokenIssuer } from '../helpers/token-issuer'
import { startModernOrigin, startStatefulOrigin, type TestOrigin } from './backends'

const V = '2025-06-18'
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V }
const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: V, capabilities: {}, clientInfo: { name: 't', version: '1' } } }
const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' }
const readFile = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'files__read_file', arguments: { q: 'x' } } }

interface Answer {
  status: number
  sid: string | null
  text: string
}

async function send(url: string, method: 'POST' | 'GET' | 'DELETE', headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const ac = new AbortController()
  const res = await fetch(url, { method, headers: { ...HEADERS, ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: ac.signal })
  // A GET that opened a stream would never end: its status is all a refusal needs.
  const text = res.headers.get('content-type')?.includes('text/event-stream') && method === 'GET' ? (ac.abort(), '') : await res.text()
  return { status: res.status, sid: res.headers.get('mcp-session-id'), text }
}

/** The text of the JSON-RPC result in a JSON or SSE answer. */
function resultText(text: string): string {
  const data = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .find((l) => l.startsWith('data:') && l.includes('"result"'))!
        .slice(5)
  return (JSON.parse(data) as { result: { content: { text: string }[] } }).result.content[0]!.text
}

/** The session id with its MAC's last character changed: the same shape, not one the edge signed. */
function altered(sid: string): string {
  return sid.slice(0, -1) + (sid.endsWith('A') ? 'B' : 'A')
}

/** The origin's own session id a virtual session id carries (its payload is signed, not encrypted). */
function originSessionIn(sid: string, origin: string): string {
  const payload = JSON.parse(Buffer.from(sid.split('.')[1]!, 'base64url').toString('utf8')) as { b: Record<string, [string, string?]> }
  return payload.b[origin]![1]!
}

describe.each(RUNTIMES)('a virtual session is bound to its caller (auth on) on $name', ({ start }) => {
  let iss: TokenIssuer
  let files: TestOrigin
  let weather: TestOrigin
  let edge: EdgeUnderTest
  let url: string
  let all: string

  beforeAll(async () => {
    iss = await startTokenIssuer({ alg: 'ES256' })
    files = await startStatefulOrigin('files', ['read_file'])
    weather = await startModernOrigin('weather', ['get_forecast'])
    const port = await freePort()
    url = `http://127.0.0.1:${port}/mcp`
    all = `${url}/all`
    edge = await start(
      {
        ORIGINS: JSON.stringify({ files: files.url, weather: weather.url }),
        VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files', 'weather'] } }),
        VIRTUAL_SESSION_KEY: 'k'.repeat(40),
        AUTH_ISSUER: iss.issuer,
        AUTH_AUDIENCE: url,
        AUTH_JWKS_URL: iss.jwksUrl,
      },
      { port }
    )
  })
  afterAll(async () => {
    await edge?.close()
    await files?.close()
    await weather?.close()
    await iss?.stop()
  })

  let n = 0
  /** A fresh token for `sub` (a new `jti` each time: a refreshed token is another string). */
  const bearer = async (sub: string, claims: Record<string, unknown> = {}) => `Bearer ${await iss.issue(url, { claims: { sub, jti: `t${++n}`, ...claims } })}`

  it("another caller's use of a session is answered as an unknown session, and logged as a denial; its own caller goes on with a refreshed token", async () => {
    const opened = await send(all, 'POST', { authorization: await bearer('user-1') }, init)
    expect(opened.status).toBe(200)
    const sid = opened.sid!
    expect(sid).toMatch(/^v1\./)

    // The same caller with a refreshed token (another string): the session serves it.
    const own = await send(all, 'POST', { authorization: await bearer('user-1'), 'mcp-session-id': sid }, list)
    expect(own.status).toBe(200)

    // Another caller with the session id: exactly what an id this edge never issued gets.
    const unknown = await send(all, 'POST', { authorization: await bearer('user-2'), 'mcp-session-id': altered(sid) }, list)
    const rid = `rid-other-${Math.random().toString(36).slice(2)}`
    const other = await send(all, 'POST', { authorization: await bearer('user-2'), 'mcp-session-id': sid, 'x-request-id': rid }, list)
    expect(unknown.status).toBe(404)
    expect([other.status, other.text]).toEqual([unknown.status, unknown.text])
    expect(other.text).not.toContain('user-1')
    const denied = (await edge.logs({ msg: 'mcp.denied', where: (r) => r.rid === rid })).find((r) => r.msg === 'mcp.denied' && r.rid === rid)
    expect(denied).toMatchObject({ level: 'warn', reason: 'session_of_another_caller', origin: 'all', status: 404, method: 'POST', sub: 'user-2' })

    // The same user through another OAuth client is another caller too.
    const otherClient = await send(all, 'POST', { authorization: await bearer('user-1', { client_id: 'client-2' }), 'mcp-session-id': sid }, list)
    expect([otherClient.status, otherClient.text]).toEqual([unknown.status, unknown.text])

    // Nor can another caller open its stream or end it.
    for (const method of ['GET', 'DELETE'] as const) {
      const a = await send(all, method, { authorization: await bearer('user-2'), 'mcp-session-id': sid })
      expect([method, a.status, a.text]).toEqual([method, unknown.status, unknown.text])
    }
    const call = await send(all, 'POST', { authorization: await bearer('user-1'), 'mcp-session-id': sid }, readFile)
    expect(call.status).toBe(200)
    expect(resultText(call.text)).toBe('files:read_file:{"q":"x"}')
    // Still in the origin session opened at initialize (the one the id carries): the other caller's DELETE ended nothing.
    expect(files.calls.at(-1)).toBe(`${originSessionIn(sid, 'files')}:read_file`)
  })

  it("requests without a session id: each caller gets the edge's own origin session of its own, the same caller the same one", async () => {
    const before = files.calls.length
    /** A 2025 call sent with no session id (the edge's own session with the stateful origin serves it), as `sub` through `client`. */
    const sessionless = async (sub: string, client?: string) => {
      const a = await send(all, 'POST', { authorization: await bearer(sub, client ? { client_id: client } : {}) }, readFile)
      expect(a.status).toBe(200)
      expect(a.sid).toBeNull()
      expect(resultText(a.text)).toBe('files:read_file:{"q":"x"}')
    }
    await sessionless('alice')
    await sessionless('bob')
    await sessionless('alice')
    await sessionless('alice', 'client-2')
    // The origin session each call was served in (`<session>:read_file`).
    const used = files.calls.slice(before).map((c) => c.slice(0, -':read_file'.length))
    expect(used).toHaveLength(4)
    const [alice, bob, aliceAgain, aliceOtherClient] = used
    expect(files.sessions).toContain(alice)
    // Two callers never share an origin session (nor the state the origin keeps in it) ...
    expect(bob).not.toBe(alice)
    // ... the same caller (a refreshed token) keeps its own ...
    expect(aliceAgain).toBe(alice)
    // ... and the same user through another OAuth client is another caller.
    expect(new Set([alice, bob, aliceOtherClient]).size).toBe(3)
  })
})

describe.each(RUNTIMES)("a virtual server's session id on an origin's own route on $name", ({ start }) => {
  let files: TestOrigin
  let weather: TestOrigin
  let edge: EdgeUnderTest
  const at = (name: string) => edge.url.replace(/\/mcp$/, `/mcp/${name}`)

  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file'])
    weather = await startModernOrigin('weather', ['get_forecast'])
    edge = await start({
      ORIGINS: JSON.stringify({ files: files.url, weather: weather.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files', 'weather'] } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(40),
    })
  })
  afterAll(async () => {
    await edge?.close()
    await files?.close()
    await weather?.close()
  })

  it('never reaches the origin: 404 saying it belongs to a virtual server, for POST, GET and DELETE; an id the edge did not sign goes through', async () => {
    const opened = await send(at('all'), 'POST', {}, init)
    expect(opened.status).toBe(200)
    const sid = opened.sid!
    const carried = files.sessions.at(-1)!
    const seenBefore = files.sessionIdsSeen!.length

    const message =
      'Session not found: this session id belongs to a virtual server of this edge, not to this origin; send it to the virtual server that issued it, or send initialize here to start a session with this origin'
    for (const method of ['POST', 'GET', 'DELETE'] as const) {
      const a = await send(at('files'), method, { 'mcp-session-id': sid }, method === 'POST' ? list : undefined)
      expect([method, a.status, JSON.parse(a.text)]).toEqual([method, 404, { jsonrpc: '2.0', id: null, error: { code: -32600, message } }])
    }
    // The origin heard nothing of it (nor of the session id it gave the edge, carried inside).
    expect(files.sessionIdsSeen!.slice(seenBefore)).toEqual([])
    // The refused POST has its log line under the origin's name.
    const line = (await edge.logs({ msg: 'mcp.post', where: (r) => r.origin === 'files' && r.status === 404 })).find((r) => r.msg === 'mcp.post' && r.origin === 'files')
    expect(line).toBeDefined()

    // An id of the same shape that the edge did not sign is the origin's business: forwarded, and its own 404.
    const forged = altered(sid)
    const a = await send(at('files'), 'POST', { 'mcp-session-id': forged }, list)
    expect(a.status).toBe(404)
    expect(a.text).toContain('"message":"Session not found"')
    expect(files.sessionIdsSeen).toContain(forged)
    // The virtual server's own session is untouched.
    const call = await send(at('all'), 'POST', { 'mcp-session-id': sid }, readFile)
    expect(resultText(call.text)).toBe('files:read_file:{"q":"x"}')
    expect(files.sessionIdsSeen!.at(-1)).toBe(carried)
  })

  it("without auth there is one caller: requests without a session id share the edge's one origin session", async () => {
    const before = files.calls.length
    for (let i = 0; i < 2; i++) expect(resultText((await send(at('all'), 'POST', {}, readFile)).text)).toBe('files:read_file:{"q":"x"}')
    const used = files.calls.slice(before)
    expect(used).toHaveLength(2)
    expect(used[1]).toBe(used[0])
  })
})

describe('VIRTUAL_SERVERS without VIRTUAL_SESSION_KEY', () => {
  let files: TestOrigin
  const open: EdgeUnderTest[] = []
  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file'])
  })
  afterAll(async () => {
    for (const e of open) await e.close()
    await files?.close()
  })
  const vars = () => ({ ORIGINS: JSON.stringify({ files: files.url }), VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files'] } }) })

  it('worker: refused as a configuration error (500 -32603), one line naming VIRTUAL_SESSION_KEY and the fix', async () => {
    const edge = await startWorkerEdge(vars())
    open.push(edge)
    const a = await send(`${edge.url}/all`, 'POST', {}, init)
    expect(a.status).toBe(500)
    expect(JSON.parse(a.text)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error in the edge' } })
    expect(a.sid).toBeNull()
    const line = (await edge.logs({ msg: 'edge.config_error' })).find((r) => r.msg === 'edge.config_error')!
    expect(line).toMatchObject({ level: 'error', variable: 'VIRTUAL_SESSION_KEY' })
    expect(line.text).toContain('npx wrangler secret put VIRTUAL_SESSION_KEY')
    expect(String(line.text)).not.toContain('\n')
    // Nothing reached the origin.
    expect(files.sessions).toEqual([])
  })

  it('node: a random key per process, said at start; sessions work on this process', async () => {
    const edge = await startNodeEdge(vars())
    open.push(edge)
    expect((await edge.logs()).find((r) => r.msg === 'virtual.session_key_generated')).toMatchObject({ level: 'warn', servers: ['all'] })
    const opened = await send(`${edge.url}/all`, 'POST', {}, init)
    expect(opened.status).toBe(200)
    const call = await send(`${edge.url}/all`, 'POST', { 'mcp-session-id': opened.sid! }, readFile)
    expect(resultText(call.text)).toBe('files:read_file:{"q":"x"}')
  })
})
