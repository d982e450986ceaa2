/** The run of the reply chain (core/guards/reply-chain.ts): each guard sees what the ones before left; the first deny ends it. */
import { describe, expect, it } from 'vitest'
import { runReplyGuards } from '../../../src/core/guards/reply-chain'
import type { ReplyGuard, ReplyVerdict } from '../../../src/core/guards/guard'

const ctx = { originId: 'default', era: '2025-06-18' as const, method: 'tools/call', tool: 't' }
const guard = (name: string, changes: boolean, check: (r: Record<string, unknown>) => ReplyVerdict, methods = ['tools/call']): ReplyGuard => ({
  name,
  phase: 'reply',
  changes,
  appliesTo: (m) => methods.includes(m),
  check,
})

describe('runReplyGuards', () => {
  it('passes the input itself through when no guard changes it', () => {
    const r = { content: [] }
    const out = runReplyGuards([guard('a', false, () => ({ kind: 'pass' }))], r, ctx)
    expect(out).toEqual({ kind: 'pass', result: r, changedBy: [] })
    expect(out.kind === 'pass' && out.result).toBe(r)
  })

  it('hands each guard the result the previous guards left, and names those that changed it', () => {
    const seen: unknown[] = []
    const up = guard('up', true, (r) => ({ kind: 'change', result: { n: (r.n as number) + 1 } }))
    const judge = guard('judge', false, (r) => (seen.push(r.n), { kind: 'pass' }))
    const out = runReplyGuards([up, up, judge], { n: 0 }, ctx)
    expect(seen).toEqual([2])
    expect(out).toEqual({ kind: 'pass', result: { n: 2 }, changedBy: ['up', 'up'] })
  })

  it('stops at the first deny; guards after it are not asked; guards for other methods are skipped', () => {
    const asked: string[] = []
    const deny = guard('deny', false, () => (asked.push('deny'), { kind: 'deny', code: 'policy_blocked', message: 'no' }))
    const later = guard('later', false, () => (asked.push('later'), { kind: 'pass' }))
    const other = guard('other', false, () => (asked.push('other'), { kind: 'deny', code: 'x', message: 'x' }), ['tools/list'])
    const out = runReplyGuards([other, deny, later], {}, ctx)
    expect(asked).toEqual(['deny'])
    expect(out.kind === 'deny' && [out.guard, out.verdict.code]).toEqual(['deny', 'policy_blocked'])
  })
})
