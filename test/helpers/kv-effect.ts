/**
 * The `kv_effect` expectation of spec-vectors-2026 rows 137-139 (tool lists with cache hints),
 * checked against the edge's real store: which scope the learned schemas are stored under
 * (`public`, or `u-<SHA-256>` of the caller's authorization context) and which freshness hint
 * they keep. The scope is recomputed here with node:crypto, independently of the edge's Web Crypto
 * code, from the definition in docs/scope.md.
 */
import { createHash } from 'node:crypto'
import { expect } from 'vitest'
import type { Case } from '../vectors/rules-harness'
import type { EdgeUnderTest } from './runtimes'
import { eventually } from './mcp-script'
import { toolKey } from '../../src/core/validation/tool-store'

/** docs/scope.md: `u-` + hex SHA-256 of the label and the exact `Authorization` value ('' when absent). */
export function expectedPrivateScope(authorization: string | undefined): string {
  return (
    'u-' +
    createHash('sha256')
      .update('mcp-edge-validator tool-list scope v1\n' + (authorization ?? ''))
      .digest('hex')
  )
}

/**
 * Asserts a row's `kv_effect` after the edge relayed its `tools/list` reply: every tool of the
 * origin's result is stored under the scope the effect names (and not under the other one), with
 * the origin's positive `ttlMs` kept, a negative or zero one dropped (the edge's own policy).
 */
export async function assertKvEffect(c: Case, edge: EdgeUnderTest): Promise<void> {
  const effect = String(c.expected.kv_effect)
  const result = (c.row.origin_stub?.body as { result: { tools: { name: string }[]; ttlMs?: number; cacheScope?: string } }).result
  const auth = Object.entries(c.headers).find(([k]) => k.toLowerCase() === 'authorization')?.[1]
  const isPublic = /shared \(public\) key/.test(effect)
  const own = expectedPrivateScope(auth)
  const [want, not] = isPublic ? ['public', own] : [own, 'public']
  for (const tool of result.tools) {
    // Learning runs in the background after the reply.
    const text = await eventually(() => edge.kvGet(toolKey(c.origin, want, tool.name)), 3000)
    const record = JSON.parse(text) as { name: string; ttlMs?: number; fetchedAt: number }
    expect(record.name, c.label).toBe(tool.name)
    expect(Date.now() - record.fetchedAt, `${c.label}: fetched now`).toBeLessThan(60_000)
    if (typeof result.ttlMs === 'number' && result.ttlMs > 0) expect(record.ttlMs, `${c.label}: ttlMs kept`).toBe(result.ttlMs)
    else expect(record.ttlMs, `${c.label}: a ttlMs of ${result.ttlMs} is not kept (edge policy)`).toBeUndefined()
    expect(await edge.kvGet(toolKey(c.origin, not, tool.name)), `${c.label}: nothing under ${not}`).toBeNull()
    if (auth) expect(text, `${c.label}: no token in the record`).not.toContain(auth.replace(/^Bearer /, ''))
  }
}
