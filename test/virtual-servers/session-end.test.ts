/**
 * The end of a virtual server's session, and of an origin session behind it, on both runtimes with
 * real SDK origins:
 * - after the client's `DELETE`, its session id is answered 404 (MCP transports: a session that
 *   ended is not found), for POST, GET and a second DELETE, though its MAC still verifies; the
 *   origin sessions it carried are not opened again for it;
 * - an origin that answers a session id it forgot (it restarted) with 400, as servers built on the
 *   SDK's examples do (server-everything), gets a new origin session as one answering 404 does:
 *   the client's session goes on;
 * - client sessions opened while a stateful origin was down (their ids carry no session with it)
 *   each get an origin session of their own there, not the one requests without a session share.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startStatefulOrigin, type TestOrigin } from './backends'

const V = '2025-06-18'
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': V }
const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: V, capabilities: {}, clientInfo: { name: 't', version: '1' } } }
const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { q: 'x' } } })

async function send(
  url: string,
  method: 'POST' | 'GET' | 'DELETE',
  headers: Record<string, string>,
  body?: unknown
): Promise<{ status: number; sid: string | null; text: string }> {
  const ac = new AbortController()
  const res = await fetch(url, { method, headers: { ...HEADERS, ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal: ac.signal })
  // A GET that opened a stream would never end: its status is all this needs.
  const text = res.headers.get('content-type')?.includes('text/event-stream') && method === 'GET' ? (ac.abort(), '') : await res.text()
  return { status: res.status, sid: res.headers.get('mcp-session-id'), text }
}

/** The JSON-RPC message of an answer (JSON, or the one message of an SSE answer). */
function message(text: string): Record<string, unknown> {
  const data = text.trimStart().startsWith('{')
    ? text
    : text
        .split('\n')
        .filter((l) => l.startsWith('data: ') && l.length > 6)
        .map((l) => l.slice(6))
        .pop()!
  return JSON.parse(data) as Record<string, unknown>
}

describe.each(RUNTIMES)('the end of a virtual server session on $name', ({ start }) => {
  let files: TestOrigin
  let notes: TestOrigin
  let edge: EdgeUnderTest
  beforeAll(async () => {
    files = await startStatefulOrigin('files', ['read_file'])
    notes = await startStatefulOrigin('notes', ['add_note'], { unknownSession: 400 })
    edge = await start({
      ORIGINS: JSON.stringify({ files: files.url, notes: notes.url }),
      VIRTUAL_SERVERS: JSON.stringify({ all: { origins: ['files', 'notes'] } }),
      VIRTUAL_SESSION_KEY: 'k'.repeat(32),
    })
  })
  afterAll(async () => {
    await edge?.close()
    await files?.close()
    await notes?.close()
  })
  const at = () => `${edge.url}/all`

  it('a session ended with DELETE is not found: POST, GET and DELETE get 404, and no origin session is opened for it', async () => {
    const sid = (await send(at(), 'POST', {}, init)).sid!
    expect(sid).toMatch(/^v1\./)
    const S = { 'mcp-session-id': sid }
    expect(message((await send(at(), 'POST', S, call(2, 'files__read_file'))).text)).toMatchObject({ id: 2, result: { content: [{ text: 'files:read_file:{"q":"x"}' }] } })
    expect((await send(at(), 'DELETE', S)).status).toBe(200)
    const opened = files.sessions.length
    const after = await send(at(), 'POST', S, call(3, 'files__read_file'))
    expect(after.status).toBe(404)
    expect(message(after.text)).toMatchObject({ id: null, error: { code: -32600 } })
    expect((await send(at(), 'GET', S)).status).toBe(404)
    expect((await send(at(), 'DELETE', S)).status).toBe(404)
    // Nor under another spelling of its MAC (the last character's unused low bits changed).
    const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
    const respelled = sid.slice(0, -1) + digits[digits.indexOf(sid.at(-1)!) ^ 1]!
    expect(Buffer.from(respelled.split('.')[2]!, 'base64url')).toEqual(Buffer.from(sid.split('.')[2]!, 'base64url'))
    expect((await send(at(), 'POST', { 'mcp-session-id': respelled }, call(5, 'files__read_file'))).status).toBe(404)
    // Its origin session was ended, and never opened again for the ended session.
    expect(files.sessions.length).toBe(opened)
    expect(files.calls.filter((c) => c.endsWith(':read_file'))).toHaveLength(1)
    // A new session works.
    const again = (await send(at(), 'POST', {}, init)).sid!
    expect(message((await send(at(), 'POST', { 'mcp-session-id': again }, call(4, 'files__read_file'))).text)).toMatchObject({ id: 4, result: {} })
  })

  it('an origin that answers a forgotten session id with 400 gets a new origin session; the client session goes on', async () => {
    const sid = (await send(at(), 'POST', {}, init)).sid!
    const S = { 'mcp-session-id': sid }
    expect(message((await send(at(), 'POST', S, call(2, 'notes__add_note'))).text)).toMatchObject({ id: 2, result: { content: [{ text: 'notes:add_note:{"q":"x"}' }] } })
    await notes.stop()
    await notes.restart()
    const before = notes.calls.length
    const r = await send(at(), 'POST', S, call(3, 'notes__add_note'))
    expect(message(r.text)).toMatchObject({ id: 3, result: { content: [{ text: 'notes:add_note:{"q":"x"}' }] } })
    // Once: the 400 refused the first send before it ran.
    expect(notes.calls.length).toBe(before + 1)
  })

  it('client sessions opened while an origin was down each get an origin session of their own there, never a shared one', async () => {
    await files.stop()
    const a = (await send(at(), 'POST', {}, init)).sid!
    const b = (await send(at(), 'POST', {}, init)).sid!
    await files.restart()
    const before = files.calls.length
    const sessions: Record<string, string>[] = [{ 'mcp-session-id': a }, { 'mcp-session-id': b }, {}]
    for (const [i, headers] of sessions.entries())
      expect(message((await send(at(), 'POST', headers, call(10 + i, 'files__read_file'))).text)).toMatchObject({ id: 10 + i, result: {} })
    // Session a again: the origin session it got before.
    expect(message((await send(at(), 'POST', { 'mcp-session-id': a }, call(13, 'files__read_file'))).text)).toMatchObject({ id: 13, result: {} })
    const used = files.calls.slice(before).map((c) => c.split(':')[0])
    expect(new Set(used.slice(0, 3)).size).toBe(3)
    expect(used[3]).toBe(used[0])
  })
})
