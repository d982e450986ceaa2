/**
 * The HTTP checks before a body is read (src/core/request/transport-checks.ts; MCP Streamable
 * HTTP "Security Warning", "Sending Messages"; docs/design.md D13, D18).
 */
import { describe, expect, it } from 'vitest'
import { checkHostAndOrigin, checkPost, HeaderMemos, isLoopbackHost } from '../../../src/core/request/transport-checks'

const headers = (h: Record<string, string>) => new Headers(h)
const POST = { host: 'localhost:8787', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
const loopback = { allowedHosts: ['localhost'], allowedOrigins: [] as string[] }

describe('Host and Origin (DNS rebinding)', () => {
  it('loopback names', () => {
    for (const h of ['localhost', 'localhost:1', '127.0.0.1', '127.9.9.9:80', '[::1]', '[::1]:8080', 'LOCALHOST']) expect(isLoopbackHost(h), h).toBe(true)
    for (const h of ['localhost.evil.com', '127.0.0.1.nip.io', '10.0.0.1', '[::2]', '']) expect(isLoopbackHost(h), h).toBe(false)
  })

  it('ALLOWED_HOSTS: localhost means loopback names; others are exact; absent means no check', () => {
    expect(checkHostAndOrigin(headers({ host: '127.0.0.1:9' }), loopback)).toBeNull()
    expect(checkHostAndOrigin(headers({ host: 'evil.example' }), loopback)).toEqual({ kind: 'transport', status: 403, message: 'Forbidden: this Host is not allowed' })
    expect(checkHostAndOrigin(headers({}), loopback)?.status).toBe(403)
    expect(checkHostAndOrigin(headers({ host: 'edge.example' }), { allowedHosts: ['edge.example'], allowedOrigins: [] })).toBeNull()
    expect(checkHostAndOrigin(headers({ host: 'anything' }), { allowedHosts: ['*'], allowedOrigins: [] })).toBeNull()
    // Names in any case, on any port unless the entry names one (a published port: edge.example:8787).
    const named = { allowedHosts: ['edge.example', 'api.example:443'], allowedOrigins: [] }
    for (const h of ['edge.example:8787', 'EDGE.Example', 'Edge.example:80', 'api.example:443', 'API.example:443'])
      expect(checkHostAndOrigin(headers({ host: h }), named), h).toBeNull()
    for (const h of ['api.example', 'api.example:8443', 'edge.example.evil', 'evil.edge.example', 'edge.example:', 'edge.example:80x'])
      expect(checkHostAndOrigin(headers({ host: h }), named)?.status, h).toBe(403)
    expect(checkHostAndOrigin(headers({ host: 'anything' }), { allowedHosts: undefined as unknown as string[], allowedOrigins: [] })).toBeNull()
  })

  it('Origin: loopback origins always, listed ones exactly, "null" and other schemes never', () => {
    const cfg = { allowedHosts: ['*'], allowedOrigins: ['https://app.example'] }
    expect(checkHostAndOrigin(headers({ origin: 'http://localhost:3000' }), cfg)).toBeNull()
    expect(checkHostAndOrigin(headers({ origin: 'https://app.example' }), cfg)).toBeNull()
    for (const o of ['https://evil.example', 'null', 'file://localhost', 'chrome-extension://abc'])
      expect(checkHostAndOrigin(headers({ origin: o }), cfg), o).toEqual({ kind: 'transport', status: 403, message: 'Forbidden: this Origin is not allowed' })
    expect(checkHostAndOrigin(headers({}), cfg)).toBeNull()
  })
})

describe('checkPost', () => {
  it('checks in order: Host, Origin, Content-Type (415), Accept (406)', () => {
    expect(checkPost(headers(POST), loopback)).toBeNull()
    expect(checkPost(headers({ ...POST, host: 'x', 'content-type': 'text/plain' }), loopback)?.status).toBe(403)
    expect(checkPost(headers({ ...POST, 'content-type': 'text/plain', accept: '' }), loopback)).toEqual({
      kind: 'transport',
      status: 415,
      message: 'Unsupported Media Type: Content-Type must be application/json',
    })
    expect(checkPost(headers({ ...POST, 'content-type': 'Application/JSON; charset=utf-8' }), loopback)).toBeNull()
  })

  it('2025 eras need both media types in Accept; 2026-07-28 needs application/json only (D18)', () => {
    const legacy = 'Not Acceptable: Accept must include application/json and text/event-stream'
    expect(checkPost(headers({ ...POST, accept: 'application/json' }), loopback)).toEqual({ kind: 'transport', status: 406, message: legacy })
    expect(checkPost(headers({ ...POST, accept: 'application/json', 'mcp-protocol-version': '2025-06-18' }), loopback)?.message).toBe(legacy)
    expect(checkPost(headers({ ...POST, accept: 'application/json', 'mcp-protocol-version': '2026-07-28' }), loopback)).toBeNull()
    expect(checkPost(headers({ ...POST, accept: 'text/event-stream', 'mcp-protocol-version': '2026-07-28' }), loopback)).toEqual({
      kind: 'transport',
      status: 406,
      message: 'Not Acceptable: Accept must include application/json',
    })
    expect(checkPost(headers({ ...POST, accept: '*/*' }), loopback)).toBeNull()
    expect(checkPost(headers({ ...POST, accept: 'application/*;q=0.9, text/*' }), loopback)).toBeNull()
    // A version header that is not a date is not modern (B14): the 2025 rule applies.
    expect(checkPost(headers({ ...POST, accept: 'application/json', 'mcp-protocol-version': 'banana' }), loopback)?.status).toBe(406)
  })

  it('gives the same verdicts with an instance memo as without, on first and repeated values', () => {
    const memos = new HeaderMemos()
    const cases = [POST, { ...POST, host: 'evil' }, { ...POST, accept: 'application/json' }, { ...POST, accept: 'application/json', 'mcp-protocol-version': '2026-07-28' }]
    for (let round = 0; round < 2; round++) for (const c of cases) expect(checkPost(headers(c), loopback, memos)).toEqual(checkPost(headers(c), loopback))
  })

  it('memos belong to one instance: another configuration is not answered from them', () => {
    const a = new HeaderMemos()
    const b = new HeaderMemos()
    expect(checkPost(headers({ ...POST, host: 'edge.example' }), { allowedHosts: ['edge.example'], allowedOrigins: [] }, a)).toBeNull()
    expect(checkPost(headers({ ...POST, host: 'edge.example' }), loopback, b)?.status).toBe(403)
  })
})
