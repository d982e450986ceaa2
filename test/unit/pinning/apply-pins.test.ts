/**
 * The list step of tool pinning (apply-pins.ts `holdToolsList`) on response texts an SDK server
 * would never write: the kept tools must reach the client as the origin's own bytes (whitespace,
 * number spellings, escapes), with only `tools` and `_meta` edited; and the pin store codec.
 */
import { describe, expect, it, vi } from 'vitest'
import { holdToolsList, PinBook } from '../../../src/core/pinning/apply-pins'
import { decodePinRecord, encodePinRecord, parsePinKey, PinRecordUnreadableError, pinKey } from '../../../src/core/pinning/pin-store'
import { MemoryKv } from '../../../src/stores/memory-kv'
import type { KvStore } from '../../../src/core/ports'

const book = (mode: 'audit' | 'enforce', kv: KvStore | undefined = new MemoryKv()) =>
  new PinBook({ kv, mode, log: () => undefined, metrics: {}, defer: (p) => void p.catch(() => undefined), now: () => Date.parse('2026-12-02T00:00:00.000Z') })

const A = '{ "name" : "a", "inputSchema" : { "type":"object", "properties": { "n": { "type": "number", "maximum": 1.0E2 } } }, "description": "caf\\u00e9" }'
const B = '{"name":"b","inputSchema":{"type":"object"}}'
const text = (a: string, b: string) => `{"jsonrpc":"2.0","id":1,"result":{ "tools" : [ ${a} ,\n ${b} ], "nextCursor": null }}`

function reply(source: string) {
  return { originId: 'default', scope: 'public', id: { raw: '1', key: 'n:1' }, paged: false, msg: JSON.parse(source) as Record<string, unknown>, source }
}

describe('holdToolsList', () => {
  it('enforce: kept tools are relayed as the origin wrote them; only tools and _meta are edited', async () => {
    const b = book('enforce')
    // First sight: the baseline; nothing is dropped, and the only edit is the added _meta.
    const first = await holdToolsList(b, reply(text(A, B)))
    expect(first).toContain(A)
    expect(first).toContain(B)
    expect(first).toMatch(/"nextCursor": null ,"_meta":\{"io\.mcp-edge\/catalogDigest":"sha256:[0-9a-f]{64}"\}\}\}$/)
    // b changes: it is left out, a keeps its exact bytes.
    const changed = await holdToolsList(b, reply(text(A, '{"name":"b","inputSchema":{"type":"object"},"description":"new"}')))
    expect(changed).toContain(`[${A}]`)
    expect(JSON.parse(changed).result.tools.map((t: { name: string }) => t.name)).toEqual(['a'])
  })

  it('enforce: an origin _meta is kept, and its own catalogDigest replaced', async () => {
    const b = book('enforce')
    const src = `{"jsonrpc":"2.0","id":1,"result":{"tools":[${B}],"_meta":{"x":1,"io.mcp-edge/catalogDigest":"forged"}}}`
    const out = JSON.parse(await holdToolsList(b, reply(src))) as { result: { _meta: Record<string, unknown> } }
    expect(out.result._meta.x).toBe(1)
    expect(out.result._meta['io.mcp-edge/catalogDigest']).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('audit: the very same text, whatever changed', async () => {
    const b = book('audit')
    const src = text(A, B)
    expect(holdToolsList(b, reply(src))).toBe(src)
  })

  it('enforce: pins that cannot be read refuse the list (-32603), saying so', async () => {
    const down: KvStore = { get: () => Promise.reject(new Error('down')), put: () => Promise.reject(new Error('down')), delete: () => Promise.reject(new Error('down')) }
    const out = JSON.parse(await holdToolsList(book('enforce', down), reply(text(A, B)))) as { error: { code: number; message: string; data: { reason: string } } }
    expect(out.error.code).toBe(-32603)
    expect(out.error.data.reason).toBe('pins-unavailable')
    expect(out.error.message).toMatch(/could not be read/)
  })

  it('enforce: a stored record that does not decode fails closed too', async () => {
    const kv = new MemoryKv()
    await kv.put(pinKey('default', 'public'), '{"v":1,"baseline":true,"pins":[{"name":"a"}],"rejected":[]}')
    const out = JSON.parse(await holdToolsList(book('enforce', kv), reply(text(A, B)))) as { error: { code: number } }
    expect(out.error.code).toBe(-32603)
  })
})

describe('pin-store codec', () => {
  it('round-trips a record, names like __proto__ included', () => {
    const r = decodePinRecord(null)
    r.baseline = true
    r.pins.set('__proto__', {
      digest: `sha256:${'a'.repeat(64)}`,
      approvedAt: '2026-12-02T00:00:00.000Z',
      source: 'operator',
      fields: { name: null },
      definition: { name: '__proto__' },
    })
    r.rejected.set('x', { digest: `sha256:${'b'.repeat(64)}`, at: '2026-12-02T00:00:00.000Z' })
    const back = decodePinRecord(encodePinRecord(r))
    expect([...back.pins.keys()]).toEqual(['__proto__'])
    expect(back.pins.get('__proto__')!.definition).toEqual({ name: '__proto__' })
    expect(back.rejected.get('x')!.digest).toBe(`sha256:${'b'.repeat(64)}`)
  })

  it('refuses what is not a pin record', () => {
    for (const t of ['not json', '{}', '{"v":2,"baseline":true,"pins":[],"rejected":[]}', '{"v":1,"baseline":true,"pins":[{"name":"a","digest":"md5:x"}],"rejected":[]}'])
      expect(() => decodePinRecord(t)).toThrow(PinRecordUnreadableError)
  })
})

describe('the pin record read by many lists at once', () => {
  it('is decoded once when every store read answers in the same turn (not once per read)', async () => {
    const kv = new MemoryKv()
    const b = book('audit', kv)
    const tools = [JSON.parse(A), JSON.parse(B)] as unknown[]
    await b.onList('default', 'public', tools, true)
    // Hold every read of the pins until 20 lists wait on it, then answer them all in one turn: the
    // first to decode must leave the record where the others look, before any awaits again.
    const gate: (() => void)[] = []
    const get = kv.get.bind(kv)
    kv.get = async (key: string) => {
      const text = await get(key)
      if (parsePinKey(key) !== null) await new Promise<void>((r) => gate.push(r))
      return text
    }
    const parse = vi.spyOn(JSON, 'parse')
    const lists = Array.from({ length: 20 }, () => b.onList('default', 'public', tools, true))
    await vi.waitFor(() => expect(gate.length).toBe(20))
    for (const open of gate) open()
    await Promise.all(lists)
    const decodes = parse.mock.calls.filter(([t]) => typeof t === 'string' && t.startsWith('{"v":1,')).length
    parse.mockRestore()
    expect(decodes).toBe(1)
  })
})
