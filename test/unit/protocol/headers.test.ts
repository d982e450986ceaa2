/**
 * The 2026-07-28 standard headers and the Mcp-Param-* codec (src/core/protocol/standard-headers.ts,
 * src/core/protocol/param-headers.ts; MCP 2026-07-28 Streamable HTTP §Standard Request Headers,
 * §Value Encoding, §Schema Extension), and what the edge learns of an origin's eras
 * (src/core/protocol/origin-eras.ts; docs/design.md D17).
 */
import { describe, expect, it } from 'vitest'
import { checkStandardHeaders, decodeHeaderValue } from '../../../src/core/protocol/standard-headers'
import { checkParamHeaders, paramHeaders } from '../../../src/core/protocol/param-headers'
import { OriginEras } from '../../../src/core/protocol/origin-eras'
import { toRawId } from '../../../src/core/jsonrpc/jsonrpc'
import { classify } from '../../../src/core/request/classify'
import { parseBody } from '../../../src/core/request/parse-body'

const id = toRawId(3)!
const b64 = (s: string) => `=?base64?${btoa(String.fromCharCode(...new TextEncoder().encode(s)))}?=`

function request(method: string, params: Record<string, unknown>) {
  const p = parseBody(JSON.stringify({ jsonrpc: '2.0', id: 3, method, params }))
  if (p.kind !== 'single') throw new Error(p.kind)
  const c = classify(p.item, p.text)
  if (c.kind !== 'request') throw new Error(c.kind)
  return c
}

describe('decodeHeaderValue', () => {
  it('trims, keeps literal values, decodes the canonical base64 sentinel of UTF-8', () => {
    expect(decodeHeaderValue('  plain value ')).toBe('plain value')
    expect(decodeHeaderValue(b64('Zürich 東京'))).toBe('Zürich 東京')
    expect(decodeHeaderValue('=?BASE64?eA==?=')).toBe('=?BASE64?eA==?=') // not the sentinel: literal
  })
  it('refuses a sentinel whose payload is not canonical base64 of UTF-8', () => {
    expect(decodeHeaderValue('=?base64?eA=?=')).toBeNull() // length not a multiple of 4
    expect(decodeHeaderValue('=?base64?eB==?=')).toBeNull() // non-canonical padding bits
    expect(decodeHeaderValue(`=?base64?${btoa('\xff\xfe')}?=`)).toBeNull() // not UTF-8
  })
})

describe('checkStandardHeaders', () => {
  const h = (x: Record<string, string>) => new Headers(x)
  it('Mcp-Method is required and must equal the method; Mcp-Name mirrors params.name or params.uri', () => {
    const c = request('tools/call', { name: 'weather' })
    expect(checkStandardHeaders(c, h({ 'mcp-method': 'tools/call', 'mcp-name': 'weather' }))).toBeNull()
    expect(checkStandardHeaders(c, h({ 'mcp-method': 'tools/call', 'mcp-name': b64('weather') }))).toBeNull()
    expect(checkStandardHeaders(c, h({}))?.error.message).toBe('Header mismatch: the Mcp-Method header is missing')
    expect(checkStandardHeaders(c, h({ 'mcp-method': 'tools/call' }))?.error.message).toBe('Header mismatch: the Mcp-Name header is missing (it must mirror params.name)')
    expect(checkStandardHeaders(c, h({ 'mcp-method': 'tools/call', 'mcp-name': 'other' }))).toMatchObject({ kind: 'protocol', status: 400, error: { code: -32020 } })
    const read = request('resources/read', { uri: 'file:///a' })
    expect(checkStandardHeaders(read, h({ 'mcp-method': 'resources/read', 'mcp-name': 'file:///a' }))).toBeNull()
    // No mirrored field in the body (B15): no Mcp-Name needed.
    expect(checkStandardHeaders(request('tools/list', {}), h({ 'mcp-method': 'tools/list' }))).toBeNull()
  })
})

describe('Mcp-Param-* (x-mcp-header)', () => {
  const schema = {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      count: { type: 'integer', 'x-mcp-header': 'Count' },
      dry: { type: 'boolean', 'x-mcp-header': 'Dry' },
      nested: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } },
      bad: { type: 'string', 'x-mcp-header': 'not a token' },
      dup: { type: 'string', 'x-mcp-header': 'region' },
      obj: { type: 'object', 'x-mcp-header': 'Obj' },
    },
  }
  it('reads the valid declarations only, through properties', () => {
    expect(paramHeaders(schema).map((d) => [d.header, d.path.join('.')])).toEqual([
      ['Region', 'region'],
      ['Count', 'count'],
      ['Dry', 'dry'],
      ['Zone', 'nested.zone'],
    ])
  })
  it('each declared argument with a value needs its header, equal after decoding; integers compare as numbers', () => {
    const h = (x: Record<string, string>) => new Headers(x)
    const args = { region: 'eu-west', count: 7, dry: false, nested: { zone: 'b' } }
    const all = { 'mcp-param-region': 'eu-west', 'mcp-param-count': '7', 'mcp-param-dry': 'false', 'mcp-param-zone': b64('b') }
    expect(checkParamHeaders(id, schema, args, h(all))).toBeNull()
    expect(checkParamHeaders(id, schema, args, h({ ...all, 'mcp-param-count': '07' }))).toBeNull()
    expect(checkParamHeaders(id, schema, args, h({ ...all, 'mcp-param-count': '7.0' }))?.error.message).toBe('Header mismatch: Mcp-Param-Count does not equal the argument count')
    const { 'mcp-param-zone': _zone, ...noZone } = all
    expect(checkParamHeaders(id, schema, args, h(noZone))?.error.message).toBe('Header mismatch: the Mcp-Param-Zone header is missing')
    // A null or absent argument needs no header (B9).
    expect(checkParamHeaders(id, schema, { region: null }, h({}))).toBeNull()
    // A value that no header can carry (an object) is left to inputSchema validation.
    expect(checkParamHeaders(id, schema, { count: { n: 1 } }, h({ 'mcp-param-count': '1' }))).toBeNull()
  })
})

describe('OriginEras (D17)', () => {
  it('knows nothing until the origin answered; learns from server/discover, -32022 and initialize', () => {
    const eras = new OriginEras()
    const v = eras.view('o')
    expect(v.speaks('2026-07-28')).toBeUndefined()
    eras.observe('o', 'server/discover', { jsonrpc: '2.0', id: 1, result: { supportedVersions: ['2026-07-28', '2025-11-25'] } })
    expect([v.speaks('2026-07-28'), v.speaks('2025-11-25'), v.speaks('2025-03-26')]).toEqual([true, true, undefined])
    eras.observe('o', 'tools/call', { jsonrpc: '2.0', id: 2, error: { code: -32022, message: 'x', data: { supported: ['2025-06-18'] } } })
    expect([v.speaks('2026-07-28'), v.speaks('2025-06-18')]).toEqual([false, true])
    expect(eras.view('other').speaks('2025-06-18')).toBeUndefined()
  })
  it('a discover answered with an error means legacy only; 401, 403 and 5xx are no evidence', () => {
    const eras = new OriginEras()
    eras.observe('o', 'server/discover', { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'no' } }, 403)
    expect(eras.view('o').speaks('2026-07-28')).toBeUndefined()
    eras.observe('o', 'server/discover', { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'no' } })
    expect(eras.view('o').speaks('2026-07-28')).toBe(false)
    eras.observe('p', 'initialize', { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18' } })
    expect(eras.view('p').speaks('2025-06-18')).toBe(true)
  })
})
