/**
 * What the edge reads of an origin's reply (src/core/grading/origin-reply.ts): the reply headers
 * relayed, JSON or SSE, and a refusing origin's JSON-RPC error (docs/design.md D9).
 */
import { describe, expect, it } from 'vitest'
import { isJson, isSse, readRefusal, relayHeaders, relaySessionOnly } from '../../../src/core/grading/origin-reply'
import type { OriginReply } from '../../../src/core/ports'

/** An origin reply as the port describes it, with a body given as text. */
function reply(status: number, headers: Record<string, string>, body = ''): OriginReply & { discarded: boolean } {
  const r = {
    status,
    headers,
    discarded: false,
    text: async () => body,
    stream: () => null,
    discard: () => void (r.discarded = true),
  }
  return r
}

describe('reply headers', () => {
  it('relays content type, session, version, caching and auth challenge only', () => {
    const r = reply(401, { 'content-type': 'application/json', 'mcp-session-id': 's', 'www-authenticate': 'Bearer', 'set-cookie': 'a=b', server: 'x', 'retry-after': '3' })
    expect(relayHeaders(r)).toEqual({ 'content-type': 'application/json', 'mcp-session-id': 's', 'www-authenticate': 'Bearer', 'retry-after': '3' })
    expect(relaySessionOnly(r)).toEqual({ 'mcp-session-id': 's' })
    expect(relaySessionOnly(reply(200, {}))).toEqual({})
  })
  it('tells SSE from JSON by the content type, parameters and case aside', () => {
    expect(isSse(reply(200, { 'content-type': 'Text/Event-Stream; charset=utf-8' }))).toBe(true)
    expect(isJson(reply(200, { 'content-type': 'application/json; charset=utf-8' }))).toBe(true)
    expect(isSse(reply(200, {}))).toBe(false)
  })
})

describe('readRefusal', () => {
  it('a non-2xx JSON body holding one JSON-RPC error: its text and code', async () => {
    const text = '{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}'
    expect(await readRefusal(reply(404, { 'content-type': 'application/json' }, text))).toMatchObject({ text, code: -32001 })
  })
  it('anything else is null, and a body that is not JSON is discarded unread', async () => {
    const html = reply(502, { 'content-type': 'text/html' }, '<h1>bad gateway</h1>')
    expect(await readRefusal(html)).toBeNull()
    expect(html.discarded).toBe(true)
    expect(await readRefusal(reply(400, { 'content-type': 'application/json' }, '{"jsonrpc":"2.0","id":1,"result":{}}'))).toBeNull()
    expect(await readRefusal(reply(400, { 'content-type': 'application/json' }, 'not json'))).toBeNull()
    expect(await readRefusal(reply(400, { 'content-type': 'application/json' }, ''))).toBeNull()
  })
})
