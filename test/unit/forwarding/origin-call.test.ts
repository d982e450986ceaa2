/**
 * What the origin call sends and reads (src/core/forwarding/origin-call.ts, src/core/grading/origin-reply.ts): the client's headers
 * without hop-by-hop and framing ones (RFC 9110 §7.6.1), the reply headers relayed, and a refusing
 * origin's JSON-RPC error (docs/design.md D9).
 */
import { describe, expect, it } from 'vitest'
import { forwardHeaders } from '../../../src/core/forwarding/origin-call'
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

describe('forwardHeaders', () => {
  it('sends the client headers except hop-by-hop, framing and encodings the edge must read', () => {
    const h = new Headers({
      host: 'edge',
      connection: 'keep-alive',
      'keep-alive': '5',
      'transfer-encoding': 'chunked',
      te: 'trailers',
      upgrade: 'h2c',
      'proxy-authorization': 'x',
      'content-length': '10',
      'accept-encoding': 'gzip',
      expect: '100-continue',
      authorization: 'Bearer t',
      'mcp-session-id': 's1',
      'content-type': 'application/json',
      'last-event-id': '7',
    })
    expect(forwardHeaders(h)).toEqual({ authorization: 'Bearer t', 'mcp-session-id': 's1', 'content-type': 'application/json', 'last-event-id': '7' })
  })

  it("drops the browser's Origin (the edge applies the Origin rule itself) unless asked to keep it", () => {
    const h = new Headers({ origin: 'https://app.example', authorization: 'Bearer t' })
    expect(forwardHeaders(h)).toEqual({ authorization: 'Bearer t' })
    expect(forwardHeaders(h, true)).toEqual({ origin: 'https://app.example', authorization: 'Bearer t' })
  })

  it('relays Mcp-Method / Mcp-Name only when the edge checked them against the body', () => {
    const h = new Headers({ 'mcp-method': 'tools/call', 'mcp-name': 'delete_file', 'mcp-param-region': 'eu', authorization: 'Bearer t' })
    expect(forwardHeaders(h)).toEqual({ 'mcp-param-region': 'eu', authorization: 'Bearer t' })
    expect(forwardHeaders(h, false, ['mcp-method'])).toEqual({ 'mcp-method': 'tools/call', 'mcp-param-region': 'eu', authorization: 'Bearer t' })
    expect(forwardHeaders(h, false, ['mcp-method', 'mcp-name'])).toEqual({
      'mcp-method': 'tools/call',
      'mcp-name': 'delete_file',
      'mcp-param-region': 'eu',
      authorization: 'Bearer t',
    })
  })
})

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
