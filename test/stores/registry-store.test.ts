/**
 * The tool registry on the stores' key rule: a tool name whose key passes 512 UTF-8 bytes cannot
 * be in any store (every store refuses such a key, as Workers KV does), so it is "not known"
 * (UNKNOWN_TOOL applies), never a store outage that would fail open (D8).
 */
import { describe, expect, it } from 'vitest'
import { ToolRegistry } from '../../src/core/validation/tool-registry'
import { MemoryKv } from '../../src/stores/memory-kv'
import { createCfworkerEngine } from '../../src/validators/cfworker'
import { toolKey } from '../../src/core/validation/tool-store'

describe('tool registry and the 512-byte key rule', () => {
  it('a tool name too long for a key is unknown (the store, which would refuse the key, is not asked)', async () => {
    const kv = new MemoryKv()
    const registry = new ToolRegistry({ kv, engine: createCfworkerEngine(), schemaTtlS: 300, validatorCacheSize: 100, refreshMinIntervalMs: 0 })
    await expect(kv.get(toolKey('default', 'public', 'n'.repeat(600)))).rejects.toThrow(RangeError)
    for (const name of ['n'.repeat(600), 'é'.repeat(250), '🌦'.repeat(130)]) {
      expect(await registry.lookup('default', 'public', name)).toBeNull()
    }
    // A name that fits (490 ASCII bytes after the 21-byte prefix) is read from the store.
    await kv.put(toolKey('default', 'public', 'm'.repeat(490)), JSON.stringify({ name: 'm'.repeat(490), inputSchema: { type: 'object' }, dialect: '2020-12', hash: 'h' }))
    expect((await registry.lookup('default', 'public', 'm'.repeat(490)))?.record.name).toBe('m'.repeat(490))
  })
})
