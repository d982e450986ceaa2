/**
 * The era decision table (docs/protocol-rules.md §3, rows E3-E24; src/core/protocol/era-decision.ts),
 * row by row on the pure functions: what each message gets from decideEra / decideBatchEra.
 */
import { describe, expect, it } from 'vitest'
import { decideBatchEra, decideEra, type EraContext } from '../../../src/core/protocol/era-decision'
import { OriginEras } from '../../../src/core/protocol/origin-eras'
import { ALL_VERSIONS, type ProtocolVersion } from '../../../src/core/jsonrpc/versions'
import { classify } from '../../../src/core/request/classify'
import { parseBody } from '../../../src/core/request/parse-body'
import { toWire } from '../../../src/core/local-answer'

const V = 'io.modelcontextprotocol/protocolVersion'
const CAPS = 'io.modelcontextprotocol/clientCapabilities'
const envelope = (v: unknown = '2026-07-28') => ({ _meta: { [V]: v, [CAPS]: {} } })
const call = (params: Record<string, unknown> = {}, id: unknown = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 't', ...params } })
const note = (params?: Record<string, unknown>) => ({ jsonrpc: '2.0', method: 'notifications/progress', ...(params ? { params } : {}) })

function ctx(headers: Record<string, string> = {}, supported: readonly ProtocolVersion[] = ALL_VERSIONS, origin?: OriginEras): EraContext {
  return { headers: new Headers(headers), supported, ...(origin ? { origin: origin.view('o') } : {}) }
}

/** decideEra on one message, as the pipeline calls it; a refusal as status, code and id. */
function era(msg: unknown, c: EraContext) {
  const parsed = parseBody(JSON.stringify(msg))
  if (parsed.kind !== 'single') throw new Error(parsed.kind)
  const m = classify(parsed.item, parsed.text)
  if (m.kind === 'invalid') throw new Error('invalid message')
  const d = decideEra(m, parsed.item.value, c)
  if (d.kind !== 'protocol') return d
  const w = toWire(d)
  return { status: w.status, code: d.error.code, id: JSON.parse(w.text).id }
}

describe('batches (E3-E5)', () => {
  it('E3: an element with a claim refuses the whole array, -32600 id null', () => {
    const d = decideBatchEra([call(), call(envelope())], ctx())
    expect(d.kind === 'protocol' && d.error.code).toBe(-32600)
  })
  it('E4: no header or 2025-03-26: the batch rules', () => {
    expect(decideBatchEra([call()], ctx())).toEqual({ kind: 'legacy', era: '2025-03-26' })
    expect(decideBatchEra([call()], ctx({ 'mcp-protocol-version': '2025-03-26' }))).toEqual({ kind: 'legacy', era: '2025-03-26' })
  })
  it('E5: any other version -32600; a malformed or unknown one -32022', () => {
    for (const [p, code] of [
      ['2025-06-18', -32600],
      ['2026-07-28', -32600],
      ['banana', -32022],
      ['2024-01-01', -32022],
    ] as const) {
      const d = decideBatchEra([call()], ctx({ 'mcp-protocol-version': p }))
      expect(d.kind === 'protocol' && [d.error.code, d.id.raw], p).toEqual([code, 'null'])
    }
  })
  it('E5 for 2024-11-05: it had no batches (its JSONRPCMessage is never an array), -32600 id null (docs/protocol-rules.md V3)', () => {
    const d = decideBatchEra([call()], ctx({ 'mcp-protocol-version': '2024-11-05' }))
    expect(d.kind === 'protocol' && [d.status, d.error.code, d.id.raw, d.error.message]).toEqual([
      400,
      -32600,
      'null',
      'Invalid Request: JSON-RPC batches are not part of MCP 2024-11-05; send one message per POST',
    ])
  })
  it('E18 for batches: 2025-03-26 not served -> -32022', () => {
    const d = decideBatchEra([call()], ctx({}, ['2025-11-25']))
    expect(d.kind === 'protocol' && d.error.code).toBe(-32022)
  })
})

describe('responses (E6, E7)', () => {
  const response = { jsonrpc: '2.0', id: 5, result: {} }
  it('E6: a client response under a 2026-07-28 header: 400 -32600 id null', () => {
    expect(era(response, ctx({ 'mcp-protocol-version': '2026-07-28' }))).toEqual({ status: 400, code: -32600, id: null })
  })
  it('E7: absent or 2025 header: legacy', () => {
    expect(era(response, ctx())).toEqual({ kind: 'legacy', era: '2025-03-26' })
    expect(era(response, ctx({ 'mcp-protocol-version': '2025-11-25' }))).toEqual({ kind: 'legacy', era: '2025-11-25' })
  })
})

describe('requests with a claim (E8-E13)', () => {
  const P = { 'mcp-protocol-version': '2026-07-28' }
  it('E8: an incomplete or malformed envelope: 400 -32602 with the id', () => {
    expect(era(call({ _meta: { [V]: '2026-07-28' } }, 'a'), ctx(P))).toEqual({ status: 400, code: -32602, id: 'a' })
    expect(era(call({ _meta: { [V]: 7, [CAPS]: {} } }), ctx(P))).toMatchObject({ code: -32602, id: 1 })
  })
  it('E9: a header different from the claim: -32020', () => {
    expect(era(call(envelope()), ctx({ 'mcp-protocol-version': '2025-11-25' }))).toEqual({ status: 400, code: -32020, id: 1 })
  })
  it('E10: Mcp-Method different from the method (case-sensitive): -32020', () => {
    expect(era(call(envelope()), ctx({ ...P, 'mcp-method': 'Tools/Call' }))).toMatchObject({ code: -32020 })
    expect(era(call(envelope()), ctx({ ...P, 'mcp-method': 'tools/call' }))).toEqual({ kind: 'modern' })
  })
  it('E11: a claim the edge or the origin does not serve: -32022 with data.supported', () => {
    expect(era(call(envelope('2027-01-01')), ctx({ 'mcp-protocol-version': '2027-01-01' }))).toMatchObject({ code: -32022 })
    expect(era(call(envelope()), ctx(P, ['2025-03-26', '2025-11-25']))).toMatchObject({ code: -32022 })
    // An origin known to speak only 2025 revisions gets no 2026-07-28 request (M28).
    const eras = new OriginEras()
    eras.observe('o', 'server/discover', { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'nope' } })
    expect(era(call(envelope()), ctx(P, ALL_VERSIONS, eras))).toMatchObject({ code: -32022 })
  })
  it('E11: once the origin listed its versions (server/discover), -32022 names only versions on that list', () => {
    const wire = (c: EraContext, msg: unknown = call(envelope('v999.0.0'), 301)) => {
      const parsed = parseBody(JSON.stringify(msg))
      if (parsed.kind !== 'single') throw new Error(parsed.kind)
      const m = classify(parsed.item, parsed.text)
      if (m.kind === 'invalid') throw new Error('invalid message')
      const d = decideEra(m, parsed.item.value, c)
      if (d.kind !== 'protocol') throw new Error(d.kind)
      return JSON.parse(toWire(d).text) as { id: unknown; error: { code: number; data: { supported: string[]; requested: string } } }
    }
    const unknown = { 'mcp-protocol-version': 'v999.0.0' }
    // Nothing learned yet: the edge's own list.
    expect(wire(ctx(unknown)).error.data.supported).toEqual([...ALL_VERSIONS])
    // A 2026-07-28-only origin announced its list: the client's server/discover showed only that.
    const eras = new OriginEras()
    eras.observe('o', 'server/discover', { jsonrpc: '2.0', id: 1, result: { supportedVersions: ['2026-07-28'] } })
    const body = wire(ctx(unknown, ALL_VERSIONS, eras))
    expect(body).toMatchObject({ id: 301, error: { code: -32022, data: { supported: ['2026-07-28'], requested: 'v999.0.0' } } })
    // The same under a modern header without an envelope (E16, B4).
    expect(wire(ctx({ 'mcp-protocol-version': '2027-01-01' }, ALL_VERSIONS, eras), call({}, 302))).toMatchObject({
      id: 302,
      error: { code: -32022, data: { supported: ['2026-07-28'], requested: '2027-01-01' } },
    })
    // A dual-era origin: both lists, edge order; an initialize answer alone announces nothing.
    const dual = new OriginEras()
    dual.observe('o', 'server/discover', { jsonrpc: '2.0', id: 1, result: { supportedVersions: ['2025-11-25', '2026-07-28', '2099-01-01'] } })
    expect(wire(ctx(unknown, ALL_VERSIONS, dual)).error.data.supported).toEqual(['2026-07-28', '2025-11-25'])
    const legacy = new OriginEras()
    legacy.observe('o', 'initialize', { jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18' } })
    expect(wire(ctx(unknown, ALL_VERSIONS, legacy)).error.data.supported).toEqual([...ALL_VERSIONS])
  })
  it('E12: a claim without the header: -32020', () => {
    expect(era(call(envelope()), ctx())).toEqual({ status: 400, code: -32020, id: 1 })
  })
  it('E13: claim and header agree: modern', () => {
    expect(era(call(envelope()), ctx(P))).toEqual({ kind: 'modern' })
  })
})

describe('requests without a claim (E14-E19)', () => {
  const init = (v: string) => ({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'c', version: '1' } } })
  it('E14: initialize without a header: the asked version when known, else 2025-03-26', () => {
    expect(era(init('2025-06-18'), ctx())).toEqual({ kind: 'legacy', era: '2025-06-18' })
    expect(era(init('1999-01-01'), ctx())).toEqual({ kind: 'legacy', era: '2025-03-26' })
    expect(era(init('2025-06-18'), ctx({}, ['2026-07-28']))).toMatchObject({ code: -32022 })
  })
  it('E15: initialize under a 2026-07-28 header: -32020', () => {
    expect(era(init('2025-06-18'), ctx({ 'mcp-protocol-version': '2026-07-28' }))).toMatchObject({ code: -32020, id: 0 })
  })
  it('E16: another request under a 2026-07-28 header without envelope: -32602; an unserved one -32022', () => {
    expect(era(call(), ctx({ 'mcp-protocol-version': '2026-07-28' }))).toMatchObject({ code: -32602 })
    expect(era(call(), ctx({ 'mcp-protocol-version': '2026-07-28' }, ['2025-03-26']))).toMatchObject({ code: -32022 })
  })
  it('E14 and E17 for 2024-11-05: an initialize offering it, and requests and notifications under its header, are served in it (V3)', () => {
    expect(era(init('2024-11-05'), ctx())).toEqual({ kind: 'legacy', era: '2024-11-05' })
    expect(era(call(), ctx({ 'mcp-protocol-version': '2024-11-05' }))).toEqual({ kind: 'legacy', era: '2024-11-05' })
    expect(era(note(), ctx({ 'mcp-protocol-version': '2024-11-05' }))).toEqual({ kind: 'legacy', era: '2024-11-05' })
    // Left out of SUPPORTED_VERSIONS: the answer before 2024-11-05 was served (D14).
    const narrowed = ALL_VERSIONS.filter((v) => v !== '2024-11-05')
    expect(era(call(), ctx({ 'mcp-protocol-version': '2024-11-05' }, narrowed))).toEqual({ status: 400, code: -32022, id: 1 })
    expect(era(init('2024-11-05'), ctx({}, narrowed))).toEqual({ kind: 'legacy', era: '2025-03-26' })
  })
  it('E17: a served 2025 header: that version', () => {
    expect(era(call(), ctx({ 'mcp-protocol-version': '2025-11-25' }))).toEqual({ kind: 'legacy', era: '2025-11-25' })
    expect(era(call(), ctx({ 'mcp-protocol-version': ' 2025-06-18 ' }))).toEqual({ kind: 'legacy', era: '2025-06-18' })
  })
  it('E18: no header: 2025-03-26 when served, else -32022', () => {
    expect(era(call(), ctx())).toEqual({ kind: 'legacy', era: '2025-03-26' })
    expect(era(call(), ctx({}, ['2025-11-25']))).toMatchObject({ code: -32022 })
  })
  it('E19: a malformed or unserved header: -32022 naming the requested value, clipped', () => {
    expect(era(call(), ctx({ 'mcp-protocol-version': 'banana' }))).toEqual({ status: 400, code: -32022, id: 1 })
    const c = ctx({ 'mcp-protocol-version': 'x'.repeat(100) })
    const parsed = parseBody(JSON.stringify(call()))
    if (parsed.kind !== 'single') throw new Error()
    const m = classify(parsed.item, parsed.text)
    if (m.kind === 'invalid') throw new Error()
    const d = decideEra(m, parsed.item.value, c)
    expect(d.kind === 'protocol' && d.error.data).toEqual({ supported: [...ALL_VERSIONS], requested: 'x'.repeat(64) })
  })
})

describe('notifications (E20-E23)', () => {
  it('E20: a claim with the header absent or equal: modern; an unserved claim: 400 id null', () => {
    expect(era(note(envelope()), ctx())).toEqual({ kind: 'modern' })
    expect(era(note(envelope()), ctx({ 'mcp-protocol-version': '2026-07-28' }))).toEqual({ kind: 'modern' })
    expect(era(note(envelope('2027-01-01')), ctx())).toMatchObject({ status: 400, id: null })
  })
  it('E21: a header different from the claim: -32020 id null', () => {
    expect(era(note(envelope()), ctx({ 'mcp-protocol-version': '2025-11-25' }))).toEqual({ status: 400, code: -32020, id: null })
  })
  it('E22: no claim, a 2026-07-28 header: modern; Mcp-Method checked when present (B3)', () => {
    expect(era(note(), ctx({ 'mcp-protocol-version': '2026-07-28' }))).toEqual({ kind: 'modern' })
    expect(era(note(), ctx({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'other' }))).toEqual({ status: 400, code: -32020, id: null })
  })
  it('E23: 2025 or no header: the 2025 rules', () => {
    expect(era(note(), ctx())).toEqual({ kind: 'legacy', era: '2025-03-26' })
    expect(era(note(), ctx({ 'mcp-protocol-version': '2025-06-18' }))).toEqual({ kind: 'legacy', era: '2025-06-18' })
  })
})
