/**
 * MemoryKv.list (the store behind STORE_FILE and the tests) has Workers KV's list shape: a
 * prefix, pages of `limit` keys in UTF-8 byte order with a cursor, expired keys left out.
 */
import { describe, expect, it } from 'vitest'
import { MemoryKv } from '../../../src/stores/memory-kv'
import { toolKey, toolPrefix } from '../../../src/core/validation/tool-store'

describe('MemoryKv.list', () => {
  it('pages a prefix in UTF-8 byte order; expired keys are not listed', async () => {
    let now = 1_000_000
    const kv = new MemoryKv(() => now)
    for (const k of [
      toolKey('a', 'public', 'zeta'),
      toolKey('a', 'public', '\u00e9t\u00e9'),
      toolKey('a', 'public', 'Alpha'),
      toolKey('a', 'public', 'beta'),
      toolKey('b', 'public', 'x'),
    ])
      await kv.put(k, '{}')
    await kv.put(toolKey('a', 'public', 'gone'), '{}', { expirationTtl: 60 })
    now += 61_000
    const names: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await kv.list({ prefix: toolPrefix('a'), limit: 2, ...(cursor ? { cursor } : {}) })
      pages++
      names.push(...page.keys.map((k) => k.name))
      expect(page.list_complete).toBe(page.cursor === undefined)
      cursor = page.cursor
    } while (cursor)
    expect(pages).toBe(2)
    // Byte order: 'A' (0x41) < 'b' < 'z' < 'é' (0xC3 0xA9).
    expect(names).toEqual([toolKey('a', 'public', 'Alpha'), toolKey('a', 'public', 'beta'), toolKey('a', 'public', 'zeta'), toolKey('a', 'public', '\u00e9t\u00e9')])
    expect((await kv.list()).keys).toHaveLength(5)
  })
})
