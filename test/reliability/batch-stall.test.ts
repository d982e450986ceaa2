/**
 * One POST does not hold the others (docs/reliability.md): a 2025-03-26 batch of `tools/list`
 * whose answer is megabytes of tool lists is read, graded, learned and digested in slices, with
 * the event loop free in between, and each distinct list is digested once per reply.
 *
 * Not timed: the Node tests observe order (a callback queued when grading starts runs before the
 * POST is finished) and counts (tool digests computed), in the edge's own process. On both
 * runtimes, the large answers the sliced path reads are checked byte for byte against the
 * origin's, and its refusals against the whole-text path's.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { RUNTIMES, type EdgeUnderTest } from '../helpers/runtimes'
import { startScriptedOrigin, type ScriptedOrigin } from '../helpers/scripted-origin'
import { mcpHeaders } from '../helpers/grading'
import { waitFor } from '../helpers/wait'
import { startEdge, type RunningEdge } from '../../src/adapters/node/index'
import type { KvStore, LogRecord } from '../../src/core/ports'
import { MemoryKv } from '../../src/stores/memory-kv'
import { DigestMemo } from '../../src/core/pinning/tool-digest'
import { PinBook } from '../../src/core/pinning/apply-pins'
import { parsePinKey } from '../../src/core/pinning/pin-store'

/** A list of `n` tools, about 200 bytes each, with escapes and non-ASCII text in it. */
function toolList(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => ({
    name: `tool_${i}`,
    description: `Tool ${i}: "quoted", caf\u00e9 \u{1f600}, a back\\slash and [brackets] {braces}, commas`,
    inputSchema: { type: 'object', properties: { city: { type: 'string', maxLength: 64 } }, required: ['city'] },
  }))
}

const listRequests = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/list' }))

/** The origin's answer to a batch of tools/list: each id answered with `resultText`, joined by `sep`. */
function batchAnswer(ids: unknown[], resultText: string, sep = ','): string {
  return `[${ids.map((id) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultText}}`).join(sep)}]`
}

async function postBatch(url: string, body: unknown): Promise<{ status: number; grade: string | null; bytes: Buffer }> {
  const res = await fetch(url, { method: 'POST', headers: mcpHeaders('2025-03-26'), body: JSON.stringify(body) })
  return { status: res.status, grade: res.headers.get('mcp-edge-grade'), bytes: Buffer.from(await res.arrayBuffer()) }
}

describe.each(RUNTIMES)('a batch of large tool lists, read in slices, on $name', ({ start }) => {
  let origin: ScriptedOrigin
  let edge: EdgeUnderTest
  /** The origin's next body. */
  let reply: Buffer = Buffer.alloc(0)
  beforeAll(async () => {
    origin = await startScriptedOrigin()
    origin.handle((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(reply))
    edge = await start({ ORIGIN_URL: origin.url })
  })
  afterAll(async () => {
    await edge?.close()
    await origin?.close()
  })

  it('relays the origin bytes of a 40-element answer (1.7 MB), white space between the elements and member order kept', async () => {
    const list = JSON.stringify({ tools: toolList(200) })
    // Three shapes of one message: result last, result first, and white space inside.
    const shapes = [
      (id: number) => `{"jsonrpc":"2.0","id":${id},"result":${list}}`,
      (id: number) => `{"result":${list},"id":${id},"jsonrpc":"2.0"}`,
      (id: number) => `{ "jsonrpc" : "2.0" , "id" : ${id} , "result" : ${list} }`,
    ]
    reply = Buffer.from(`\n[ ${Array.from({ length: 40 }, (_, i) => shapes[i % 3]!(i + 1)).join(' ,\r\n ')} ]\n`)
    expect(reply.length).toBeGreaterThan(1_000_000)
    const got = await postBatch(edge.url, listRequests(40))
    expect([got.status, got.grade]).toEqual([200, 'ok=40'])
    expect(got.bytes.equals(reply)).toBe(true)
  })

  it('an answer missing ids and repeating one: each kept response as the origin wrote it, the gateway errors after them', async () => {
    const list = JSON.stringify({ tools: toolList(150) })
    reply = Buffer.from(batchAnswer([1, 2, 2, 4], list))
    const got = await postBatch(edge.url, listRequests(5))
    expect(got.grade).toBe('ok=3 missing=2')
    const text = got.bytes.toString()
    expect(text.startsWith(batchAnswer([1, 2, 4], list).slice(0, -1) + ',')).toBe(true)
    expect((JSON.parse(text) as { id: number; error?: { code: number } }[]).map((m) => [m.id, m.error?.code])).toEqual([
      [1, undefined],
      [2, undefined],
      [4, undefined],
      [3, -31003],
      [5, -31003],
    ])
  })

  it.each([
    ['a trailing comma', (t: string) => t.slice(0, -1) + ',]'],
    ['a missing comma', (t: string) => t.replace('}},{', '}} {')],
    ['text after the array', (t: string) => t + ' x'],
    ['an element that is not JSON', (t: string) => t.replace('"id":2,', '"id":2,,')],
    ['no closing bracket', (t: string) => t.slice(0, -1)],
  ])('a large answer with %s is not JSON: every id gets -31001, as with one parse of the whole', async (_name, spoil) => {
    reply = Buffer.from(spoil(batchAnswer([1, 2, 3], JSON.stringify({ tools: toolList(300) }))))
    const got = await postBatch(edge.url, listRequests(3))
    expect(got.grade).toBe('origin_error=3')
    expect((JSON.parse(got.bytes.toString()) as { error: { code: number } }[]).map((m) => m.error.code)).toEqual([-31001, -31001, -31001])
  })

  it('a large answer that is not clean UTF-8 is sent as well-formed text (U+FFFD), not relayed', async () => {
    const good = Buffer.from(batchAnswer([1, 2], JSON.stringify({ tools: toolList(400) })))
    const at = good.indexOf('Tool 399')
    reply = Buffer.concat([good.subarray(0, at), Buffer.from([0xff]), good.subarray(at)])
    const got = await postBatch(edge.url, listRequests(2))
    expect(got.grade).toBe('ok=2')
    const text = got.bytes.toString()
    expect(text.includes('\ufffdTool 399')).toBe(true)
    expect((JSON.parse(text) as { result: { tools: unknown[] } }[]).map((m) => m.result.tools.length)).toEqual([400, 400])
  })
})

describe('one large batch on the Node edge (in this process)', () => {
  let origin: ScriptedOrigin
  let edge: RunningEdge | undefined
  const records: LogRecord[] = []
  /** Called on each store read while set. */
  let onGet: ((key: string) => void) | null = null
  // A store per test: each test's pins start from nothing, whatever the tests before it wrote.
  let mem = new MemoryKv()
  const kv: KvStore = {
    get: (k) => {
      onGet?.(k)
      return mem.get(k)
    },
    put: (k, v, o) => mem.put(k, v, o),
    delete: (k) => mem.delete(k),
  }
  const list = JSON.stringify({ tools: toolList(200) })
  beforeAll(async () => {
    origin = await startScriptedOrigin()
  })
  beforeEach(() => {
    mem = new MemoryKv()
    origin.handle((req, res) => {
      const ids = Array.isArray(req.json) ? (req.json as { id: unknown }[]).map((m) => m.id) : [(req.json as { id: unknown }).id]
      res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(req.json) ? batchAnswer(ids, list) : batchAnswer(ids, list).slice(1, -1))
    })
  })
  afterEach(async () => {
    vi.restoreAllMocks()
    onGet = null
    await edge?.close()
    edge = undefined
    records.length = 0
  })
  afterAll(async () => {
    await origin?.close()
  })

  it('a callback queued when grading starts runs before the POST is finished (the grading yields)', async () => {
    edge = await startEdge({ env: { STORE_FILE: 'memory', ORIGIN_URL: origin.url }, port: 0, kv, log: (r) => records.push(r) })
    // The first store read of the batch is the learning of its first list, during grading.
    let ranAt = -1
    onGet = () => {
      onGet = null
      setImmediate(() => (ranAt = records.filter((r) => r.msg === 'mcp.post').length))
    }
    const got = await postBatch(edge.url, listRequests(30))
    expect([got.status, got.grade]).toEqual([200, 'ok=30'])
    // 0: it ran while the POST was still being graded (its log line is written when it is finished).
    expect(ranAt).toBe(0)
  })

  it('pinning audit: the tools of a list repeated 30 times in one answer are digested once', async () => {
    const digest = vi.spyOn(DigestMemo.prototype, 'digest')
    const entries = vi.spyOn(DigestMemo.prototype, 'entry')
    edge = await startEdge({ env: { STORE_FILE: 'memory', ORIGIN_URL: origin.url, TOOL_PINNING: 'audit' }, port: 0, kv, log: (r) => records.push(r) })
    const got = await postBatch(edge.url, listRequests(30))
    expect([got.status, got.grade]).toEqual([200, 'ok=30'])
    // The decision runs in the background: once every tool of the list has its digest, no more come.
    await waitFor(() => digest.mock.calls.length >= 200 || null, { what: '200 tool digests' })
    const second = await postBatch(edge.url, listRequests(30))
    expect(second.grade).toBe('ok=30')
    // The second answer's list is a new parse; its entries are remembered, so none is hashed again.
    await waitFor(() => entries.mock.calls.length >= 400 || null, { what: '400 tool entries' })
    expect(digest.mock.calls.length).toBe(200)
  })

  it('pinning audit: 30 lists in one answer that differ in one tool each are digested per tool, not per list', async () => {
    const digest = vi.spyOn(DigestMemo.prototype, 'digest')
    const lists = vi.spyOn(DigestMemo.prototype, 'perList')
    const hashes = vi.spyOn(crypto.subtle, 'digest')
    // Each id gets the list with its id in tool 0's description: 30 distinct list texts sharing 199 tools.
    origin.handle((req, res) => {
      const msgs = (Array.isArray(req.json) ? req.json : [req.json]) as { id: number }[]
      const answer = msgs.map((m) => {
        const tools = toolList(200)
        ;(tools[0] as { description: string }).description += ` (request ${m.id})`
        return `{"jsonrpc":"2.0","id":${m.id},"result":${JSON.stringify({ tools })}}`
      })
      res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(req.json) ? `[${answer.join(',')}]` : answer[0])
    })
    edge = await startEdge({ env: { STORE_FILE: 'memory', ORIGIN_URL: origin.url, TOOL_PINNING: 'audit' }, port: 0, kv, log: (r) => records.push(r) })
    const got = await postBatch(edge.url, listRequests(30))
    expect([got.status, got.grade]).toEqual([200, 'ok=30'])
    // Every distinct list is digested in the background (once each): wait for all 30 to finish.
    await waitFor(() => lists.mock.calls.length >= 30 || null, { what: '30 lists digested' })
    await Promise.all(lists.mock.results.map((r) => r.value))
    // Hashed: the 199 shared tools once, and tool 0 once per list (199 + 30), not 30 x 200.
    expect(digest.mock.calls.length).toBe(199 + 30)
    // Every SHA-256 of the process (tool digests, member sub-digests of a baseline, catalog digests):
    // a few per tool and per list, not per tool and list (30 x 200 = 6000 for the tool digests alone).
    expect(hashes.mock.calls.length).toBeLessThan(4 * 200 + 4 * 30)
  })

  it('pinning audit: the pin record is read for each of 30 lists in one answer but decoded again only when its text changed', async () => {
    // Each id gets the list with its id in tool 0's description, so every list is decided on its own.
    origin.handle((req, res) => {
      const msgs = (Array.isArray(req.json) ? req.json : [req.json]) as { id: number }[]
      const answer = msgs.map((m) => {
        const tools = toolList(200)
        ;(tools[0] as { description: string }).description += ` (request ${m.id})`
        return `{"jsonrpc":"2.0","id":${m.id},"result":${JSON.stringify({ tools })}}`
      })
      res.writeHead(200, { 'content-type': 'application/json' }).end(Array.isArray(req.json) ? `[${answer.join(',')}]` : answer[0])
    })
    const decided = vi.spyOn(PinBook.prototype, 'onList')
    edge = await startEdge({ env: { STORE_FILE: 'memory', ORIGIN_URL: origin.url, TOOL_PINNING: 'audit' }, port: 0, kv, log: (r) => records.push(r) })
    let pinReads = 0
    onGet = (k) => void (parsePinKey(k) !== null && pinReads++)
    /** Posts 30 lists and waits until the edge has decided each (in the background). */
    const postAndDecide = async () => {
      decided.mockClear()
      const got = await postBatch(edge!.url, listRequests(30))
      expect([got.status, got.grade]).toEqual([200, 'ok=30'])
      await waitFor(() => decided.mock.calls.length >= 30 || null, { what: '30 lists decided' })
      await Promise.all(decided.mock.results.map((r) => r.value))
    }
    // The first answer sets the baseline (or finds the one stored).
    await postAndDecide()
    const parse = vi.spyOn(JSON, 'parse')
    pinReads = 0
    await postAndDecide()
    // Every list read the pins from the store; the stored record (`{"v":1,...}`) did not change, so it
    // was parsed at most once (the text held may predate the first answer's baseline write), not once
    // per list (each a few milliseconds with 700 definitions).
    expect(pinReads).toBeGreaterThanOrEqual(30)
    expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.startsWith('{"v":1,')).length).toBeLessThanOrEqual(1)
  })
})
