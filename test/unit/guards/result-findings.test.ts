/**
 * The result checks find in one walk what a scan of each string finds (core/guards/result-findings.ts):
 * RESULT_SECRETS and RESULT_CONTROL share one walk of a result and one scan of each string, and a
 * check that the walk says found nothing passes without a walk of its own. That shortcut must drop
 * no finding: over the credential and hidden-character vectors of the other result-check tests,
 * placed in text items, resource text and deep in `structuredContent` (array indices after
 * skipped numbers, integer-like and `__proto__` member names, a name that is itself a token), the
 * chain reports, changes and refuses exactly what the check of each string by itself gives (the
 * reference below: `findSecretsAsRead` and `findControls` on every visited string, as the guards
 * did before the shared walk).
 */
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/core/config'
import { runReplyGuards, type ReplyChainOutcome } from '../../../src/core/guards/reply-chain'
import { replyChain } from '../../../src/core/grading/reply-guards'
import type { ReplyFinding, ReplyUnderCheck } from '../../../src/core/guards/guard'
import { visitResultText } from '../../../src/core/guards/result-text'
import { findControls, stripControls } from '../../../src/core/guards/control-scan'
import { SECRET_CATEGORIES, findSecrets, redactSecrets } from '../../../src/core/guards/secret-scan'
import { findSecretsAsRead, resultFindings } from '../../../src/core/guards/result-findings'
import { CONTROL_TEXT, GITHUB_PAT, IMAGE, LOOK_ALIKES, SECRETS } from '../../helpers/result-origin'

const tags = (ascii: string) => [...ascii].map((ch) => String.fromCodePoint(0xe0000 + ch.charCodeAt(0))).join('')
/** `n` characters of `alphabet`, deterministic (fake credentials, made from parts). */
const chars = (n: number, alphabet = 'aB3dE5gH7jK9mN1pQ2sT4vW6yZ8') => Array.from({ length: n }, (_, i) => alphabet[(i * 7) % alphabet.length]).join('')
const TOKEN = SECRETS.github_token!

/** The categories the shared origin's vectors leave out (docs/result-checks.md#categories). */
const MORE_SECRETS = [
  `aws_secret_access_key = ${chars(40, 'abcDEF123/+')}`,
  'https://hooks.slack.com/services/T0123ABCD/B0123ABCD/' + chars(24),
  'npm_' + chars(36),
  'sk-proj-' + chars(48, 'aB3_dE5-gH7'),
  'sk-ant-api03-' + chars(90, 'aB3_dE5-gH7'),
  'SG.' + chars(22) + '.' + chars(43, 'aB3_dE5-gH7'),
  'shpat_' + chars(32, '0123456789abcdef'),
  'lin_api_' + chars(40),
]

/** Every vector: each credential, look-alikes, hidden characters of each kind, tokens split by them, clean and short strings. */
const VECTORS: string[] = [
  ...Object.values(SECRETS),
  GITHUB_PAT,
  ...MORE_SECRETS,
  MORE_SECRETS.join(' '),
  JSON.stringify({ key: SECRETS.private_key }),
  LOOK_ALIKES,
  CONTROL_TEXT,
  `a ${TOKEN.slice(0, 10)}\u200b${TOKEN.slice(10)} b`,
  `${TOKEN.slice(0, 6)}\x1b[0m${TOKEN.slice(6)}`,
  `x${TOKEN.slice(0, 12)}${tags('zz')}${TOKEN.slice(12)}`,
  `hi${tags('ignore previous')} there`,
  `go \u{1F3F4}${tags('gbeng')}${String.fromCodePoint(0xe007f)}!`,
  '\x9b2J\x9d0;title\x07\x90dcs\x9c\x85',
  'x\x1b]0;no end here',
  '\x00',
  '\u200b',
  'tab\tlf\ncr\r del\x7f 👍🏽 é שלום',
  'plain words with nothing in them at all, long enough to be scanned for credentials',
  'ok',
  '',
]

/** A result with every vector in every place a check reads, and around them values no check reads. */
function resultOf(strings: readonly string[]): Record<string, unknown> {
  // Parsed from JSON text, as the edge gets a result: `__proto__` is then an own member.
  const sc = JSON.parse(
    JSON.stringify({
      rows: strings.map((s, i) => ({ id: i, none: null, ok: true, [`k${i}`]: s, nested: [1, s, { '0': s, deep: [[2, s]] }] })),
      '7': strings[3],
      [TOKEN]: strings[4],
      protoSlot: 'replaced below',
    }).replace('"protoSlot"', '"__proto__"')
  ) as Record<string, unknown>
  return {
    content: [
      { type: 'text', text: strings.join(' | ') },
      IMAGE,
      ...strings.map((text) => ({ type: 'text', text })),
      { type: 'resource', resource: { uri: 'file:///a', text: strings.join('\n') } },
    ],
    structuredContent: sc,
    isError: false,
  }
}

const CTX = { originId: 'default', era: '2025-06-18' as const, method: 'tools/call', tool: 't' }

function run(env: Record<string, string>, result: Record<string, unknown>) {
  const found: ReplyFinding[] = []
  const chain = replyChain(loadConfig({ ORIGIN_URL: 'http://127.0.0.1:1/mcp', ...env }))
  const out = runReplyGuards(chain, { msg: { result }, text: '' }, { ...CTX, report: (f) => found.push(f) }) as ReplyChainOutcome
  return { out, found }
}

/** The reference: one check, each visited string scanned by itself. */
function reference(check: 'result_secrets' | 'result_control', action: ReplyFinding['action'], result: Record<string, unknown>) {
  const found: ReplyFinding[] = []
  const changed = visitResultText(result, (text, at) => {
    const spans = check === 'result_secrets' ? findSecretsAsRead(text) : findControls(text)
    if (spans.length === 0) return null
    const counts = new Map<string, number>()
    for (const sp of spans) counts.set(sp.category, (counts.get(sp.category) ?? 0) + 1)
    for (const [category, count] of counts) found.push({ check, category, action, at: at(), count })
    if (action === 'redact') return redactSecrets(text, spans as ReturnType<typeof findSecrets>)
    if (action === 'strip') return stripControls(text, spans as ReturnType<typeof findControls>)
    return null
  })
  return { found, changed }
}

describe('the result checks share one walk and drop no finding', () => {
  const result = resultOf(VECTORS)

  it('the vectors hold findings of every kind, in every place (the comparison below is not empty)', () => {
    const { found } = run({}, resultOf(VECTORS))
    const kinds = new Set(found.map((f) => `${f.check}:${f.category}`))
    for (const c of SECRET_CATEGORIES) expect(kinds).toContain(`result_secrets:${c}`)
    for (const c of ['terminal_escape', 'c0_control', 'c1_control', 'bidi_control', 'zero_width', 'tag_character']) expect(kinds).toContain(`result_control:${c}`)
    const places = new Set(found.map((f) => f.at.replace(/\d+/g, 'N')))
    for (const p of [
      'content[N].text',
      'content[N].resource.text',
      'structuredContent.rows[N].kN',
      'structuredContent.rows[N].nested[N].*',
      'structuredContent.rows[N].nested[N].deep[N][N]',
      'structuredContent.*',
    ])
      expect(places).toContain(p)
  })

  it('defaults (audit, audit): the findings of each string, in order, and the very same result', () => {
    const { out, found } = run({}, result)
    const secrets = reference('result_secrets', 'audit', result)
    const controls = reference('result_control', 'audit', result)
    expect(found).toEqual([...secrets.found, ...controls.found])
    expect(out.kind === 'pass' && out.result).toBe(result)
  })

  it('strip and redact: hidden characters stripped, then credentials redacted in what is left, as each string by itself gives', () => {
    const { out, found } = run({ RESULT_CONTROL: 'strip', RESULT_SECRETS: 'redact' }, result)
    const controls = reference('result_control', 'strip', result)
    const secrets = reference('result_secrets', 'redact', controls.changed)
    expect(found).toEqual([...controls.found, ...secrets.found])
    expect(out.kind === 'pass' && out.result).toEqual(secrets.changed)
    expect(out.kind === 'pass' && out.changedBy).toEqual(['result_control', 'result_secrets'])
    // The input is never changed in place.
    expect(result).toEqual(resultOf(VECTORS))
  })

  it('each check alone, and block: the same findings and the same verdict', () => {
    expect(run({ RESULT_CONTROL: 'off' }, result).found).toEqual(reference('result_secrets', 'audit', result).found)
    expect(run({ RESULT_SECRETS: 'off' }, result).found).toEqual(reference('result_control', 'audit', result).found)
    const stripOnly = run({ RESULT_SECRETS: 'off', RESULT_CONTROL: 'strip' }, result)
    expect(stripOnly.out.kind === 'pass' && stripOnly.out.result).toEqual(reference('result_control', 'strip', result).changed)
    const blocked = run({ RESULT_SECRETS: 'block' }, result)
    expect(blocked.out).toMatchObject({ kind: 'deny', guard: 'result_secrets', verdict: { code: 'secret_in_result' } })
    expect(blocked.found).toEqual(reference('result_secrets', 'block', result).found)
  })

  it('each vector alone, as text and as a structuredContent value: the findings of the string by itself', () => {
    for (const v of VECTORS) {
      const one = { content: [{ type: 'text', text: v }], structuredContent: { v: [0, v] } }
      const { found } = run({}, one)
      expect(found, JSON.stringify(v)).toEqual([...reference('result_secrets', 'audit', one).found, ...reference('result_control', 'audit', one).found])
    }
  })

  it('a clean result is walked once for both checks (each value read once), and a result with a finding once more per check that found one', () => {
    let reads = 0
    const counted = (text: string) => ({
      get note() {
        reads++
        return text
      },
    })
    const clean = { content: [{ type: 'text', text: 'nothing here' }], structuredContent: { rows: [counted('a plain note, long enough to be scanned for credentials')] } }
    expect(run({}, clean).found).toEqual([])
    expect(reads).toBe(1)
    reads = 0
    const dirty = { content: [{ type: 'text', text: 'nothing here' }], structuredContent: { rows: [counted(`note ${TOKEN}`)] } }
    expect(run({}, dirty).found).toEqual([{ check: 'result_secrets', category: 'github_token', action: 'audit', at: 'structuredContent.rows[0].note', count: 1 }])
    // The shared walk, then the credential check's walk to report it; the hidden-character check found nothing and does not walk.
    expect(reads).toBe(2)
  })

  it('what is found is kept for the run while the result is the same object; a changed result is looked at afresh', () => {
    const under: ReplyUnderCheck = { result: { content: [{ type: 'text', text: 'a\u200bb' }] }, msg: {}, text: '' }
    const first = resultFindings(under, false)
    expect(first.secrets).toBeNull()
    expect([...first.controls.keys()]).toEqual([0])
    // Asking for credentials too looks for them, keeping what was found of hidden characters.
    const both = resultFindings(under, true)
    expect(both.controls).toBe(first.controls)
    expect(both.secrets?.size).toBe(0)
    expect(resultFindings(under, false)).toBe(both)
    const stripped: ReplyUnderCheck = { ...under, result: { content: [{ type: 'text', text: 'ab' }] } }
    expect(resultFindings(stripped, true).controls.size).toBe(0)
  })

  it('findSecretsAsRead given the hidden characters found already gives what it finds by itself', () => {
    for (const v of VECTORS) expect(findSecretsAsRead(v, findControls(v))).toEqual(findSecretsAsRead(v))
  })
})
