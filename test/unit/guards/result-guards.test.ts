/**
 * The result checks as a chain (core/guards/reply-chain.ts with the guards of a configuration):
 * audit changes nothing (the same object comes back), findings are reported without their text,
 * and a secret is judged before a truncation could cut it in two.
 */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/core/config'
import { runReplyGuards, type ReplyChainOutcome } from '../../../src/core/guards/reply-chain'
import { replyChain } from '../../../src/core/grading/reply-guards'
import type { ReplyFinding } from '../../../src/core/guards/guard'

const TOKEN = 'ghp_' + 'aB3dE5gH7jK9mN1pQ2sT4vW6yZ8aB3dE5gH7j'.slice(0, 36)
const chain = (env: Record<string, string>) => replyChain(loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp', ...env }))
const run = (env: Record<string, string>, result: Record<string, unknown>) => {
  const found: ReplyFinding[] = []
  // Without a relay only the guards that read the result run (the result checks): synchronously.
  const out = runReplyGuards(
    chain(env),
    { msg: { result }, text: '' },
    { originId: 'default', era: '2025-06-18', method: 'tools/call', tool: 't', report: (f) => found.push(f) }
  ) as ReplyChainOutcome
  return { out, found }
}

describe('the result checks in the reply chain', () => {
  it('the defaults (audit, audit) report findings and hand back the very same result', () => {
    const result = { content: [{ type: 'text', text: `key ${TOKEN} \u202e` }] }
    const { out, found } = run({}, result)
    expect(out).toMatchObject({ kind: 'pass', result, changedBy: [] })
    expect(out.kind === 'pass' && out.result).toBe(result)
    // RESULT_SECRETS runs among the changing guards in every mode (before any truncation); an auditing RESULT_CONTROL only judges.
    expect(found).toEqual([
      { check: 'result_secrets', category: 'github_token', action: 'audit', at: 'content[0].text', count: 1 },
      { check: 'result_control', category: 'bidi_control', action: 'audit', at: 'content[0].text', count: 1 },
    ])
    expect(JSON.stringify(found)).not.toContain(TOKEN)
  })

  it('off builds no guard; tools/list answers are never scanned', () => {
    expect(chain({ RESULT_SECRETS: 'off', RESULT_CONTROL: 'off' }).filter((g) => g.name.startsWith('result_'))).toEqual([])
    const found: ReplyFinding[] = []
    void runReplyGuards(
      chain({}),
      { msg: { result: { tools: [{ name: TOKEN }] } }, text: '' },
      { originId: 'default', era: '2025-06-18', method: 'tools/list', report: (f) => found.push(f) }
    )
    expect(found).toEqual([])
  })

  it('a secret across the truncation point is blocked, not cut in two (secrets run before truncation)', () => {
    const text = 'a '.repeat(490) + TOKEN + ' b'.repeat(490)
    const { out } = run({ RESULT_SECRETS: 'block', MAX_RESULT_TEXT_BYTES: '1000', OVERSIZE_RESULT: 'truncate' }, { content: [{ type: 'text', text }] })
    expect(out.kind === 'deny' && [out.guard, out.verdict.code]).toEqual(['result_secrets', 'secret_in_result'])
    const redacted = run({ RESULT_SECRETS: 'redact', MAX_RESULT_TEXT_BYTES: '1000', OVERSIZE_RESULT: 'truncate' }, { content: [{ type: 'text', text }] }).out
    expect(redacted.kind === 'pass' && redacted.changedBy).toEqual(['result_secrets', 'oversize_result'])
    expect(JSON.stringify(redacted)).not.toContain(TOKEN.slice(0, 12))
  })

  it('stripping a zero-width character inside a token lets the secret check find it', () => {
    const split = TOKEN.slice(0, 10) + '\u200b' + TOKEN.slice(10)
    const { out } = run({ RESULT_SECRETS: 'redact', RESULT_CONTROL: 'strip' }, { content: [{ type: 'text', text: split }] })
    expect(out.kind === 'pass' && out.result.content).toEqual([{ type: 'text', text: '[REDACTED:github_token]' }])
  })
})
