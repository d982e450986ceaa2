/**
 * The run of the reply chain (core/guards/reply-chain.ts): each guard sees what the ones before
 * left; the first deny ends it; guards that read the message need a relay; synchronous until a
 * guard returns a promise.
 */
import { describe, expect, it } from 'vitest'
import { orderReplyGuards, runReplyGuards, type ReplyChainOutcome } from '../../../src/core/guards/reply-chain'
import type { RelayedReply, ReplyGuard, ReplyStage, ReplyUnderCheck, ReplyVerdict } from '../../../src/core/guards/guard'

const ctx = { originId: 'default', era: '2025-06-18' as const, method: 'tools/call', tool: 't' }
const guard = (name: string, changes: boolean, check: (r: Record<string, unknown>) => ReplyVerdict, methods = ['tools/call']): ReplyGuard => ({
  name,
  phase: 'reply',
  stage: changes ? 'mutate' : 'judge',
  reads: 'result',
  appliesTo: (m) => methods.includes(m),
  check: (r) => check(r.result),
})
const messageGuard = (name: string, stage: ReplyStage, check: (r: ReplyUnderCheck) => ReplyVerdict | Promise<ReplyVerdict>): ReplyGuard => ({
  name,
  phase: 'reply',
  stage,
  reads: 'message',
  appliesTo: () => true,
  check,
})
const input = (result: Record<string, unknown>) => ({ msg: { jsonrpc: '2.0', id: 1, result }, text: JSON.stringify({ jsonrpc: '2.0', id: 1, result }) })
const sync = (out: ReplyChainOutcome | Promise<ReplyChainOutcome>): ReplyChainOutcome => {
  expect(out).not.toBeInstanceOf(Promise)
  return out as ReplyChainOutcome
}
/** A relay as the reply grader gives one (the runner reads only the request id from it). */
const relay = { ex: {}, p: { id: { raw: '1', key: 'n:1' }, method: 'tools/call' }, repeat: false } as unknown as RelayedReply

describe('runReplyGuards', () => {
  it('passes the input itself through when no guard changes it', () => {
    const r = { content: [] }
    const out = sync(runReplyGuards([guard('a', false, () => ({ kind: 'pass' }))], input(r), ctx))
    expect(out).toMatchObject({ kind: 'pass', result: r, changedBy: [] })
    expect(out.kind === 'pass' && out.result).toBe(r)
  })

  it('hands each guard the result the previous guards left, and names those that changed it', () => {
    const seen: unknown[] = []
    const up = guard('up', true, (r) => ({ kind: 'change', result: { n: (r.n as number) + 1 } }))
    const judge = guard('judge', false, (r) => (seen.push(r.n), { kind: 'pass' }))
    const out = sync(runReplyGuards([up, up, judge], input({ n: 0 }), ctx))
    expect(seen).toEqual([2])
    expect(out).toMatchObject({ kind: 'pass', result: { n: 2 }, changedBy: ['up', 'up'] })
  })

  it('stops at the first deny; guards after it are not asked; guards for other methods are skipped', () => {
    const asked: string[] = []
    const deny = guard('deny', false, () => (asked.push('deny'), { kind: 'deny', code: 'policy_blocked', message: 'no' }))
    const later = guard('later', false, () => (asked.push('later'), { kind: 'pass' }))
    const other = guard('other', false, () => (asked.push('other'), { kind: 'deny', code: 'x', message: 'x' }), ['tools/list'])
    const out = sync(runReplyGuards([other, deny, later], input({}), ctx))
    expect(asked).toEqual(['deny'])
    expect(out.kind === 'deny' && [out.guard, out.verdict.code]).toEqual(['deny', 'policy_blocked'])
  })

  it('an error response passes the result guards by; message guards run only with a relay', () => {
    const asked: string[] = []
    const chain = [guard('result', false, () => (asked.push('result'), { kind: 'pass' })), messageGuard('message', 'judge', () => (asked.push('message'), { kind: 'pass' }))]
    sync(runReplyGuards(chain, { msg: { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } }, text: '' }, { ...ctx, relay }))
    expect(asked).toEqual(['message'])
    sync(runReplyGuards(chain, input({}), ctx))
    expect(asked).toEqual(['message', 'result'])
  })

  it('writes a changed result once before the first message guard, which sees the new text; the grade is handed over before the holds', () => {
    const seen: string[] = []
    const up = guard('up', true, () => ({ kind: 'change', result: { n: 1 } }))
    const grade = messageGuard('grade', 'judge', (r) => (seen.push(r.text), { kind: 'judge', grade: { grade: 'ok' }, text: r.text + ' ' }))
    const hold = messageGuard('hold', 'hold', (r) => (seen.push(`hold:${r.text}`), Promise.resolve({ kind: 'rewrite', text: 'held' })))
    const judged: unknown[] = []
    const out = runReplyGuards([up, grade, hold], input({ n: 0 }), { ...ctx, relay }, { judged: (r) => void judged.push([r.text, r.grade]) })
    expect(seen).toEqual(['{"jsonrpc":"2.0","id":1,"result":{"n":1}}', 'hold:{"jsonrpc":"2.0","id":1,"result":{"n":1}} '])
    // The grade went out before the hold was awaited.
    expect(judged).toEqual([['{"jsonrpc":"2.0","id":1,"result":{"n":1}} ', { grade: 'ok' }]])
    expect(out).toBeInstanceOf(Promise)
    return expect(out).resolves.toMatchObject({ kind: 'pass', text: 'held', grade: { grade: 'ok' } })
  })

  it('hold: false ends the run before the holding guards', () => {
    const hold = messageGuard('hold', 'hold', () => Promise.resolve({ kind: 'rewrite', text: 'held' }))
    const out = sync(runReplyGuards([hold], input({}), { ...ctx, relay }, { hold: false }))
    expect(out.kind === 'pass' && out.text).toBe(input({}).text)
  })
})

describe('orderReplyGuards', () => {
  it('sorts by stage (mutate, judge, hold), keeping the given order within one', () => {
    const g = (name: string, stage: ReplyStage) => messageGuard(name, stage, () => ({ kind: 'pass' }))
    const names = orderReplyGuards([g('h1', 'hold'), g('j1', 'judge'), g('m1', 'mutate'), g('j2', 'judge'), g('m2', 'mutate')]).map((x) => x.name)
    expect(names).toEqual(['m1', 'm2', 'j1', 'j2', 'h1'])
  })
})
