/**
 * The tool-record store (src/core/validation/tool-store.ts): the KV layout every existing store was
 * written in (the key forms are fixed: a store written before must read the same), the record
 * codec, and the reads and writes the registry, the admin API and `mcp-edge schemas` share.
 */
import { describe, expect, it } from 'vitest'
import {
  adminListKey,
  decodeToolRecord,
  deleteStoredTool,
  getStoredTool,
  listStoredNames,
  listStoredTools,
  MAX_TOOL_NAME,
  putPulledList,
  putStoredTool,
  putStoredTools,
  readNames,
  scopeKeys,
  scopeMarkerKey,
  scopeMarkerPrefix,
  pinKey,
  pinServedKey,
  sourceTag,
  StoreCannotListError,
  toolKey,
  toolListKey,
  toolNameProblem,
  toolPrefix,
  toToolRecord,
} from '../../../src/core/validation/tool-store'
import type { KvStore } from '../../../src/core/ports'
import { MemoryKv } from '../../../src/stores/memory-kv'

const SCHEMA = { type: 'object', properties: { n: { type: 'integer' } } }

describe('tool-store: layout', () => {
  // The one place the key forms are written out: every other test builds its keys with these
  // helpers, so a change of layout fails here (and only here) until it is meant.
  it('keeps the key forms of existing stores, adminlist:, the scope markers and the pins included', () => {
    expect(toolKey('o', 'public', 'get_weather')).toBe('tools:o:public:get_weather')
    expect(toolPrefix('o', 'public')).toBe('tools:o:public:')
    expect(toolPrefix('o')).toBe('tools:o:')
    expect(toolListKey('o', 'public')).toBe('toollist:o:public')
    expect(adminListKey('o', 'public')).toBe('adminlist:o:public')
    expect(scopeMarkerKey('o', 'u-1')).toBe('scopes:o:u-1')
    expect(scopeMarkerPrefix('o')).toBe('scopes:o:')
    expect(pinKey('o', 'public')).toBe('pins:o:public')
    expect(pinServedKey('o', 'u-1')).toBe('pinserved:o:u-1')
  })

  it('one tool-name bound: 256 UTF-16 units, and the key within 512 UTF-8 bytes', () => {
    expect(MAX_TOOL_NAME).toBe(256)
    expect(toolNameProblem('a'.repeat(256), 'default', 'public')).toBeNull()
    expect(toolNameProblem('a'.repeat(257), 'default', 'public')).toMatch(/1 to 256 characters/)
    expect(toolNameProblem('', 'default', 'public')).toMatch(/1 to 256 characters/)
    expect(toolNameProblem('天'.repeat(256), 'default', 'public')).toMatch(/at most 512 UTF-8 bytes \(this one would be 789\)/)
  })
})

describe('tool-store: codec', () => {
  it('builds the record a learned tools/list entry gives, and decodes it back', () => {
    const r = toToolRecord({ name: 't', inputSchema: SCHEMA, outputSchema: { type: 'object' } }, '2025-11-25', 5, 'src', 1000)!
    expect(r).toEqual({
      name: 't',
      inputSchema: SCHEMA,
      outputSchema: { type: 'object' },
      dialect: '2020-12',
      outputDialect: '2020-12',
      hash: r.hash,
      fetchedAt: 5,
      source: 'src',
      ttlMs: 1000,
    })
    expect(r.hash).toMatch(/^[0-9a-f]{8}$/)
    expect(decodeToolRecord(JSON.stringify(r))).toEqual(r)
    expect(toToolRecord({ name: '', inputSchema: {} }, '2025-11-25', 0)).toBeNull()
    expect(toToolRecord({ name: 'x' }, '2025-11-25', 0)).toBeNull()
    expect(toToolRecord({ name: 'x', inputSchema: {} }, '2025-11-25', 0, undefined, -1)!.ttlMs).toBeUndefined()
  })

  it('decodes a hand-written record without a dialect (its $schema, else 2020-12) and refuses what is not a record', () => {
    expect(decodeToolRecord('{"name":"h","inputSchema":{}}')!.dialect).toBe('2020-12')
    expect(decodeToolRecord('{"name":"h","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#"}}')!.dialect).toBe('draft-07')
    for (const text of [null, '', 'not json', '[]', '{"name":1,"inputSchema":{}}', '{"name":"h"}', '{"name":"h","inputSchema":{},"dialect":"draft-04"}'])
      expect(decodeToolRecord(text), String(text)).toBeNull()
  })

  it('tags records with a hash of the URL an origin name stands for', () => {
    const config = { originUrl: 'http://a.example/mcp', origins: { second: { url: 'http://b.example/mcp', toolsAllow: [], toolsDeny: [] } } }
    expect(sourceTag(config, 'default')).toMatch(/^[0-9a-f]{8}$/)
    expect(sourceTag(config, 'second')).not.toBe(sourceTag(config, 'default'))
    expect(sourceTag(config, 'none')).toBeUndefined()
  })
})

describe('tool-store: reads and writes', () => {
  it('a push adds to adminlist:, a delete removes the record and its name from both lists', async () => {
    const kv = new MemoryKv()
    const a = toToolRecord({ name: 'a', inputSchema: SCHEMA }, '2025-11-25', 1)!
    const b = toToolRecord({ name: 'b', inputSchema: SCHEMA }, '2025-11-25', 1)!
    await putPulledList(kv, 'o', 'public', ['a'], 7)
    await putStoredTools(kv, 'o', 'public', [a, b])
    expect(await readNames(kv, adminListKey('o', 'public'))).toEqual(['a', 'b'])
    expect((await listStoredTools(kv, 'o')).map((r) => r.name)).toEqual(['a', 'b'])
    expect(await listStoredNames(kv, 'o', 'public', 1)).toEqual({ names: ['a'], listedBy: 'store' })
    expect(await getStoredTool(kv, 'o', 'b')).toEqual(b)
    expect(await deleteStoredTool(kv, 'o', 'a')).toBe(true)
    expect(await deleteStoredTool(kv, 'o', 'a')).toBe(false)
    expect(await readNames(kv, adminListKey('o', 'public'))).toEqual(['b'])
    expect(JSON.parse((await kv.get(toolListKey('o', 'public')))!)).toMatchObject({ names: [], fetchedAt: 7 })
  })

  it('a pull deletes the records of the tools its list no longer names, but not what an operator pushed', async () => {
    const kv = new MemoryKv()
    await putStoredTool(kv, 'o', 'public', toToolRecord({ name: 'gone', inputSchema: {} }, '2025-11-25', 1)!)
    await putStoredTools(kv, 'o', 'public', [toToolRecord({ name: 'pushed', inputSchema: {} }, '2025-11-25', 1)!])
    await putPulledList(kv, 'o', 'public', ['gone', 'pushed', 'kept'], 1)
    await putPulledList(kv, 'o', 'public', ['kept'], 2, 5000)
    expect(await kv.get(toolKey('o', 'public', 'gone'))).toBeNull()
    expect(await kv.get(toolKey('o', 'public', 'pushed'))).not.toBeNull()
    expect(JSON.parse((await kv.get(toolListKey('o', 'public')))!)).toMatchObject({ names: ['kept'], fetchedAt: 2, ttlMs: 5000 })
  })

  it('a store without list: names from the pulled and pushed lists; listing records and scopes is refused', async () => {
    const mem = new MemoryKv()
    const kv: KvStore = { get: (k) => mem.get(k), put: (k, v, o) => mem.put(k, v, o), delete: (k) => mem.delete(k) }
    await putPulledList(kv, 'o', 'public', ['p'], 1)
    await putStoredTools(kv, 'o', 'public', [toToolRecord({ name: 'a', inputSchema: {} }, '2025-11-25', 1)!])
    expect(await listStoredNames(kv, 'o', 'public', 10)).toEqual({ names: ['a', 'p'], listedBy: 'toollist' })
    await expect(listStoredTools(kv, 'o')).rejects.toBeInstanceOf(StoreCannotListError)
    await expect(scopeKeys(kv, 'o', 'u-1')).rejects.toBeInstanceOf(StoreCannotListError)
  })

  it('a name whose key no store accepts is not in the store, without a store call', async () => {
    const kv: KvStore = {
      get: () => Promise.reject(new Error('no call expected')),
      put: () => Promise.reject(new Error('no call expected')),
      delete: () => Promise.reject(new Error('no call expected')),
    }
    expect(await getStoredTool(kv, 'o', '天'.repeat(256))).toBeNull()
    expect(await deleteStoredTool(kv, 'o', '天'.repeat(256))).toBe(false)
  })
})
