/**
 * What grading hands to the validation side (src/core/grading/learn-from-replies.ts): every
 * relayed `tools/list` page is learned in the background under the scope its `cacheScope` names,
 * and a graded `tools/call` result is checked against the tool's `outputSchema` (D12). One row
 * per case, on fake-deps.ts (a real registry over a memory store).
 */
import { describe, expect, it } from 'vitest'
import { onToolsCallReply, onToolsListReply } from '../../../src/core/grading/learn-from-replies'
import type { GradedResponse } from '../../../src/core/grading/grade-reply'
import type { ProtocolVersion } from '../../../src/core/jsonrpc/versions'
import { exchangeWith, gradingDeps } from './fake-deps'

const TOOL = { name: 'echo', inputSchema: { type: 'object' } }
const COUNTER = { name: 'counter', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }

describe('onToolsListReply: a relayed tools/list page is learned', () => {
  it.each([
    ['a 2025 page with no cacheScope: public', '2025-06-18', undefined, {}, 'public'],
    ['cacheScope public: public', '2026-07-28', undefined, { cacheScope: 'public' }, 'public'],
    ['cacheScope private with the caller known: the caller scope', '2026-07-28', 'p:caller', { cacheScope: 'private' }, 'p:caller'],
    ['cacheScope private, caller unknown: not learned', '2026-07-28', undefined, { cacheScope: 'private' }, null],
    ['2026-07-28 with no cacheScope (read as private), caller unknown: not learned', '2026-07-28', undefined, {}, null],
  ] as const)('%s', async (_, era, scope, extra, learnedIn) => {
    const { deps, deferred } = gradingDeps()
    const ex = exchangeWith(deps, [{ id: 1, method: 'tools/list' }], era as ProtocolVersion)
    if (scope) ex.scope = scope
    onToolsListReply(ex, ex.pending.get('n:1')!, { jsonrpc: '2.0', id: 1, result: { tools: [TOOL], ...extra } })
    expect(deferred).toHaveLength(learnedIn === null ? 0 : 1)
    await Promise.all(deferred)
    // A lookup in a private scope falls back to public, so public is checked on its own.
    expect(deps.registry.peek('default', 'public', 'echo') !== null).toBe(learnedIn === 'public')
    expect(deps.registry.peek('default', 'p:caller', 'echo') !== null).toBe(learnedIn !== null)
  })

  it.each([
    ['an error reply', { jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'x' } }, 'tools/list'],
    ['a result without tools', { jsonrpc: '2.0', id: 1, result: {} }, 'tools/list'],
    ['a reply to another method', { jsonrpc: '2.0', id: 1, result: { tools: [TOOL] } }, 'tools/call'],
  ])('%s: nothing learned', (_, msg, method) => {
    const { deps, deferred } = gradingDeps()
    const ex = exchangeWith(deps, [{ id: 1, method }])
    onToolsListReply(ex, ex.pending.get('n:1')!, msg)
    expect(deferred).toEqual([])
  })
})

describe('onToolsCallReply: D12, the outputSchema check', () => {
  const OK: GradedResponse = { grade: 'ok' }
  it.each([
    ['warn, a result breaking the schema: relayed, the row marked', 'warn', { structuredContent: { n: 'x' } }, OK, 'ok', { outputSchema: 'invalid' }, false],
    ['warn, no structuredContent while a schema is declared: marked', 'warn', { content: [] }, OK, 'ok', { outputSchema: 'invalid' }, false],
    ['strict, a result breaking the schema: replaced by an isError result', 'strict', { structuredContent: { n: 'x' } }, OK, 'tool_error', { outputSchema: 'invalid' }, true],
    ['strict, a conforming result: unchanged', 'strict', { structuredContent: { n: 1 } }, OK, 'ok', undefined, false],
    ['off: nothing checked', 'off', { structuredContent: { n: 'x' } }, OK, 'ok', undefined, false],
    [
      'strict, an isError result: never checked',
      'strict',
      { isError: true, structuredContent: { n: 'x' } },
      { grade: 'tool_error', isError: true },
      'tool_error',
      undefined,
      false,
    ],
    ['strict, a result graded rpc_error: never checked', 'strict', { structuredContent: { n: 'x' } }, { grade: 'rpc_error' }, 'rpc_error', undefined, false],
  ] as const)('%s', async (_, mode, result, graded, grade, row, replaced) => {
    const { deps } = gradingDeps({ OUTPUT_SCHEMA: mode })
    await deps.registry.learn('default', 'public', [COUNTER], '2025-06-18')
    const ex = exchangeWith(deps, [{ id: 1, method: 'tools/call', tool: 'counter' }])
    const out = onToolsCallReply(ex, ex.pending.get('n:1')!, { jsonrpc: '2.0', id: 1, result }, graded)
    expect(out.graded.grade).toBe(grade)
    expect(out.row).toEqual(row)
    expect(out.graded.text !== undefined).toBe(replaced)
    if (replaced) expect(JSON.parse(out.graded.text!)).toMatchObject({ id: 1, result: { isError: true } })
  })

  it('a tool the registry does not know: not checked', () => {
    const { deps } = gradingDeps({ OUTPUT_SCHEMA: 'strict' })
    const ex = exchangeWith(deps, [{ id: 1, method: 'tools/call', tool: 'counter' }])
    expect(onToolsCallReply(ex, ex.pending.get('n:1')!, { jsonrpc: '2.0', id: 1, result: {} }, { grade: 'ok' })).toEqual({ graded: { grade: 'ok' } })
  })
})
