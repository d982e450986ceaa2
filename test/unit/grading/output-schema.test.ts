/**
 * D12 on its own (src/core/grading/output-schema.ts): a `tools/call` result against the tool's
 * `outputSchema`, in each `OUTPUT_SCHEMA` mode, one row per case. The tool is the registry's
 * (fake-deps.ts), compiled by the Workers validator engine as on the edge.
 */
import { describe, expect, it } from 'vitest'
import { checkOutputSchema } from '../../../src/core/grading/output-schema'
import { toRawId } from '../../../src/core/jsonrpc/jsonrpc'
import type { ResolvedTool } from '../../../src/core/validation/tool-record'
import { gradingDeps } from './fake-deps'

const COUNTER = { name: 'counter', inputSchema: { type: 'object' }, outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }
const PLAIN = { name: 'plain', inputSchema: { type: 'object' } }

async function toolNamed(name: string): Promise<ResolvedTool> {
  const { deps } = gradingDeps()
  await deps.registry.learn('default', 'public', [COUNTER, PLAIN], '2025-06-18')
  return deps.registry.peek('default', 'public', name)!
}

describe('checkOutputSchema', () => {
  it.each([
    ['a conforming result: valid', 'counter', 'strict', { structuredContent: { n: 1 } }, 'valid', []],
    ['a wrong type: invalid, the path under structuredContent', 'counter', 'warn', { structuredContent: { n: 'x' } }, 'invalid', ['structuredContent.n']],
    ['a required member missing: invalid, the path names it', 'counter', 'warn', { structuredContent: {} }, 'invalid', ['structuredContent.n']],
    ['no structuredContent while a schema is declared: invalid', 'counter', 'warn', { content: [] }, 'invalid', ['structuredContent']],
    ['OUTPUT_SCHEMA=off: skipped', 'counter', 'off', { structuredContent: { n: 'x' } }, 'skipped', []],
    ['an isError result: skipped', 'counter', 'strict', { isError: true }, 'skipped', []],
    ['an input_required result: skipped', 'counter', 'strict', { resultType: 'input_required' }, 'skipped', []],
    ['a task handle: skipped', 'counter', 'strict', { task: { taskId: 't' } }, 'skipped', []],
    ['a tool with no outputSchema: skipped', 'plain', 'strict', { structuredContent: { n: 'x' } }, 'skipped', []],
  ] as const)('%s', async (_, name, mode, result, status, paths) => {
    const c = checkOutputSchema(result, await toolNamed(name), mode, toRawId(1)!, '2025-06-18', name)
    expect(c.status).toBe(status)
    expect((c.issues ?? []).map((i) => i.path)).toEqual(paths)
    expect(c.text).toBeUndefined()
  })

  it('strict: the replacement names the tool and the paths, never the values, and carries the correlation id', async () => {
    const c = checkOutputSchema({ structuredContent: { n: 'secret-value' } }, await toolNamed('counter'), 'strict', toRawId('a')!, '2026-07-28', 'counter', 'rid-1')
    const msg = JSON.parse(c.text!) as { id: string; result: Record<string, unknown> }
    expect(msg.id).toBe('a')
    expect(msg.result).toMatchObject({
      isError: true,
      resultType: 'complete',
      _meta: {
        'io.mcp-edge/failure': {
          class: 'capability',
          code: 'output_schema_violation',
          correlationId: 'rid-1',
          agentGuidance: 'The result was withheld because the tool broke its own output schema; do not retry as it is, tell the user.',
        },
      },
    })
    expect(msg.result).not.toHaveProperty('structuredContent')
    expect(c.text).toContain('structuredContent.n: must be a number')
    expect(c.text).not.toContain('secret-value')
  })

  it('an unknown tool: skipped', () => {
    expect(checkOutputSchema({ structuredContent: {} }, null, 'strict', toRawId(1)!, '2025-06-18', 'x')).toEqual({ status: 'skipped' })
  })
})
