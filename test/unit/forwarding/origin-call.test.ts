/**
 * What the origin call sends (src/core/forwarding/origin-call.ts): the client's headers without
 * hop-by-hop and framing ones (RFC 9110 §7.6.1). What it reads of the reply:
 * test/unit/grading/origin-reply.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { forwardHeaders } from '../../../src/core/forwarding/origin-call'

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
