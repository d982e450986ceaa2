/**
 * The scanners of the result checks (core/guards/result-secrets.ts, result-control.ts,
 * oversize-result.ts): what each finds, what it leaves alone (look-alikes), and that the work stays
 * linear on hostile text. The credentials are made here from parts, never real ones.
 */
import { describe, expect, it } from 'vitest'
import { findSecrets, redactSecrets } from '../../../src/core/guards/secret-scan'
import { findControls, stripControls } from '../../../src/core/guards/result-control'
import { truncateText, utf8Bytes } from '../../../src/core/guards/oversize-result'
import { visitResultText } from '../../../src/core/guards/result-text'
import { findSecretsAsRead } from '../../../src/core/guards/result-secrets'

/** `n` characters of `alphabet`, deterministic. */
const chars = (n: number, alphabet = 'aB3dE5gH7jK9mN1pQ2sT4vW6yZ8') => Array.from({ length: n }, (_, i) => alphabet[(i * 7) % alphabet.length]).join('')
const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ234567'

/** One fake credential per category. */
export const FAKE: Record<string, string> = {
  private_key: ['-----BEGIN RSA PRIVATE KEY-----', ...Array.from({ length: 6 }, () => chars(64, 'MIIEpAIBAAKCAQEA0Zr+/xyz019')), '-----END RSA PRIVATE KEY-----'].join('\n'),
  aws_access_key_id: 'AKIA' + chars(16, UPPER),
  github_token: 'ghp_' + chars(36),
  github_pat: 'github_pat_' + chars(82, 'aB3_dE5gH7'),
  slack_token: 'xoxb-' + '1234567890-0987654321-' + chars(24),
  google_api_key: 'AIza' + chars(35, 'aB3dE5_gH7-jK9'),
  stripe_live_key: 'sk_live_' + chars(32),
  slack_webhook: 'https://hooks.slack.com/services/T0123ABCD/B0123ABCD/' + chars(24),
  npm_token: 'npm_' + chars(36),
  openai_api_key: 'sk-proj-' + chars(48, 'aB3_dE5-gH7'),
  anthropic_api_key: 'sk-ant-api03-' + chars(90, 'aB3_dE5-gH7'),
  sendgrid_api_key: 'SG.' + chars(22) + '.' + chars(43, 'aB3_dE5-gH7'),
  shopify_token: 'shpat_' + chars(32, '0123456789abcdef'),
  linear_api_key: 'lin_api_' + chars(40),
}

const categoryOf = (name: string) => (name === 'github_pat' ? 'github_token' : name)

describe('findSecrets', () => {
  for (const [name, secret] of Object.entries(FAKE)) {
    it(`finds ${name} in prose and redacts only it`, () => {
      const text = `config follows: ${secret} (end)`
      const spans = findSecrets(text)
      expect(spans.map((s) => s.category)).toEqual([categoryOf(name)])
      expect(redactSecrets(text, spans)).toBe(`config follows: [REDACTED:${categoryOf(name)}] (end)`)
    })
  }

  it('finds a private key whose line breaks are the two characters \\n of JSON text', () => {
    const text = JSON.stringify({ key: FAKE.private_key })
    expect(findSecrets(text).map((s) => s.category)).toEqual(['private_key'])
  })

  it('finds an AWS secret access key after its name, redacting the value only', () => {
    const text = `aws_secret_access_key = ${chars(40, 'abcDEF123/+')}\nregion = eu-west-1`
    const spans = findSecrets(text)
    expect(spans.map((s) => s.category)).toEqual(['aws_secret_access_key'])
    expect(redactSecrets(text, spans)).toBe('aws_secret_access_key = [REDACTED:aws_secret_access_key]\nregion = eu-west-1')
  })

  it('leaves look-alikes alone: a commit hash, a UUID, PRIVATE KEY in prose or a lone header, a short AKIA, a token inside a word', () => {
    const lookAlikes = [
      'commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it',
      'id 123e4567-e89b-12d3-a456-426614174000',
      'Never paste your PRIVATE KEY into a chat.',
      '-----BEGIN PRIVATE KEY-----\n(key elided)\n-----END PRIVATE KEY-----',
      '-----BEGIN CERTIFICATE-----\n' + chars(128, 'MIIBkTCB+wIJAKHBfpeg') + '\n-----END CERTIFICATE-----',
      'AKIA1234 is too short; AKIAEXAMPLE too',
      'xAKIA' + chars(16, UPPER),
      'AKIA' + chars(17, UPPER),
      'ghp_' + chars(35),
      'sk_test_' + chars(32),
    ]
    for (const t of lookAlikes) expect(findSecrets(t), t).toEqual([])
  })

  it('stays linear on hostile text: 30,000 private-key headers before one footer, and a megabyte of prefixes', () => {
    const header = '-----BEGIN RSA PRIVATE KEY-----\n'
    const hostile = header.repeat(30_000) + '-----END RSA PRIVATE KEY-----'
    const spans = findSecrets(hostile)
    // Headers are body characters too: the body is read once, and the one key found is the last
    // 32 KB before the footer (a longer body is no key).
    expect(spans.length).toBe(1)
    expect(spans[0]).toMatchObject({ end: hostile.length, category: 'private_key' })
    expect(hostile.length - spans[0]!.start).toBeLessThanOrEqual(32_768 + 64)
    expect(findSecrets('AKIAghp_xoxb-AIzask_live_'.repeat(40_000))).toEqual([])
  })
})

describe('findControls', () => {
  it('finds CSI and OSC sequences whole, C0 (not tab, LF, CR), C1, bidi and zero-width characters', () => {
    const text = 'a\x1b[31mred\x1b[0m b\x1b]0;title\x07c\x1b]8;;http://x\x1b\\link\td\ne\rf\x00g\x85h\u202ei\u2067j\u200bk\u2060l\ufeffm\u009b2Jn'
    const spans = findControls(text)
    expect(spans.map((s) => [text.slice(s.start, s.end), s.category])).toEqual([
      ['\x1b[31m', 'terminal_escape'],
      ['\x1b[0m', 'terminal_escape'],
      ['\x1b]0;title\x07', 'terminal_escape'],
      ['\x1b]8;;http://x\x1b\\', 'terminal_escape'],
      ['\x00', 'c0_control'],
      ['\x85', 'c1_control'],
      ['\u202e', 'bidi_control'],
      ['\u2067', 'bidi_control'],
      ['\u200b', 'zero_width'],
      ['\u2060', 'zero_width'],
      ['\ufeff', 'zero_width'],
      ['\u009b2J', 'terminal_escape'],
    ])
    expect(stripControls(text, spans)).toBe('ared b' + 'clink\td\ne\rfghijklmn')
  })

  it('keeps tab, LF, CR, DEL, emoji, accents and right-to-left letters', () => {
    const clean = 'tab\tlf\ncr\r del\x7f 👍🏽 é שלום'
    expect(findControls(clean)).toEqual([])
  })

  it('finds Unicode tag characters (ASCII smuggling) as one run, and keeps the tag sequence of an emoji flag', () => {
    const tags = (ascii: string) => [...ascii].map((ch) => String.fromCodePoint(0xe0000 + ch.charCodeAt(0))).join('')
    const hidden = `hi${tags('ignore previous')} there`
    expect(findControls(hidden).map((sp) => [hidden.slice(sp.start, sp.end), sp.category])).toEqual([[tags('ignore previous'), 'tag_character']])
    expect(stripControls(hidden, findControls(hidden))).toBe('hi there')
    // England's flag: U+1F3F4, the tags "gbeng", CANCEL TAG (U+E007F).
    const england = '\u{1F3F4}' + tags('gbeng') + String.fromCodePoint(0xe007f)
    expect(findControls(`go ${england}!`)).toEqual([])
    // Tags after the black flag that do not end with CANCEL TAG are no flag.
    expect(findControls('\u{1F3F4}' + tags('gb')).map((sp) => sp.category)).toEqual(['tag_character'])
  })

  it('an unterminated OSC strips the ESC alone and keeps the text; hostile repeats stay linear', () => {
    const text = 'x\x1b]0;no end here'
    const spans = findControls(text)
    expect(stripControls(text, spans)).toBe('x]0;no end here')
    expect(findControls('\x1b]'.repeat(200_000)).length).toBe(200_000)
  })

  it('unterminated C1 control-string introducers (OSC, DCS, SOS, PM, APC) stay linear: the body is read once, not once per introducer', () => {
    // Each of these starts a control string that only BEL, ST or ESC ends; none comes, so a scan
    // per introducer to the end of the text would be quadratic. The characters read are counted
    // (String.prototype.charCodeAt, which the scanner reads through), so the test is not timed.
    const native = String.prototype.charCodeAt
    let reads = 0
    String.prototype.charCodeAt = function (this: string, i: number) {
      reads++
      return native.call(this, i)
    }
    try {
      for (const c of ['\x9d', '\x90', '\x98', '\x9e', '\x9f']) {
        reads = 0
        const spans = findControls(c.repeat(5000))
        expect(spans.length).toBe(5000)
        expect(spans.every((s) => s.end === s.start + 1 && s.category === 'terminal_escape')).toBe(true)
        expect(reads).toBeLessThan(10 * 5000)
      }
    } finally {
      String.prototype.charCodeAt = native
    }
    // A terminator after them ends the first one, whole; an ESC that starts another escape ends none.
    const ended = '\x9d'.repeat(1000) + 'title\x07.'
    expect(findControls(ended).map((s) => ended.slice(s.start, s.end))).toEqual(['\x9d'.repeat(1000) + 'title\x07'])
    const cut = '\x9d'.repeat(1000) + '\x1b[31mred'
    const spans = findControls(cut)
    expect(spans.length).toBe(1001)
    expect(cut.slice(spans[1000]!.start, spans[1000]!.end)).toBe('\x1b[31m')
  })
})

describe('truncateText', () => {
  it('keeps head and tail within the bound, the marker naming the bytes dropped, never splitting a character', () => {
    const text = 'é'.repeat(3000) + '😀'.repeat(3000) // 6,000 + 12,000 bytes
    const total = utf8Bytes(text)
    expect(total).toBe(new TextEncoder().encode(text).length)
    const out = truncateText(text, total, 1000)
    expect(utf8Bytes(out)).toBeLessThanOrEqual(1000)
    expect(out.startsWith('éé')).toBe(true)
    expect(out.endsWith('😀😀')).toBe(true)
    expect(out).not.toMatch(/\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/)
    const dropped = Number(/\[\.\.\. (\d+) bytes dropped/.exec(out)![1])
    expect(utf8Bytes(out.replace(/\n\[\.\.\..*\.\.\.\]\n/, ''))).toBe(total - dropped)
  })
})

describe('visitResultText', () => {
  it('visits text items, resource text and structuredContent strings; never images or keys; copies only what changed', () => {
    const image = { type: 'image', data: 'QUtJQQ==', mimeType: 'image/png' }
    const result = {
      content: [{ type: 'text', text: 'a' }, image, { type: 'resource', resource: { uri: 'file:///x', text: 'b' } }],
      structuredContent: { k: ['c', { d: 'e' }], n: 1 },
    }
    const seen: string[] = []
    const out = visitResultText(result, (t, at) => (seen.push(`${at()}=${t}`), t === 'e' ? 'E' : null))
    expect(seen).toEqual(['content[0].text=a', 'content[2].resource.text=b', 'structuredContent.k[0]=c', 'structuredContent.k[1].d=e'])
    expect(out.content).toBe(result.content)
    expect(out.structuredContent).toEqual({ k: ['c', { d: 'E' }], n: 1 })
    expect(result.structuredContent.k[1]).toEqual({ d: 'e' })
    expect(visitResultText(result, () => null)).toBe(result)
  })

  it('a member name that is a token, holds escapes or is long is written `*` in the path (paths go into log lines)', () => {
    const result = { structuredContent: { [FAKE.aws_access_key_id!]: 'a', 'x\u001b[2J': 'b', ['n'.repeat(40)]: 'c', ok_name: 'd' } }
    const seen: string[] = []
    visitResultText(result, (_t, at) => (seen.push(at()), null))
    expect(seen).toEqual(['structuredContent.*', 'structuredContent.*', 'structuredContent.*', 'structuredContent.ok_name'])
  })
})

describe('findSecretsAsRead', () => {
  const token = 'ghp_' + 'aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5'
  it('finds a token split by hidden characters, its span covering them, and redacts it whole', () => {
    for (const split of ['\u200b', '\x1b[0m', '\u2060\u200b', '\u{E0041}']) {
      const text = `key: ${token.slice(0, 10)}${split}${token.slice(10)} end`
      const spans = findSecretsAsRead(text)
      expect(spans.map((sp) => sp.category)).toEqual(['github_token'])
      expect(redactSecrets(text, spans)).toBe('key: [REDACTED:github_token] end')
    }
  })

  it('maps every span back in one walk: a megabyte of split tokens', () => {
    const text = `${token.slice(0, 8)}\u200b${token.slice(8)} `.repeat(20_000)
    const spans = findSecretsAsRead(text)
    expect(spans.length).toBe(20_000)
    expect(redactSecrets(text, spans)).toBe('[REDACTED:github_token] '.repeat(20_000))
  })

  it('text without hidden characters is scanned as it is', () => {
    expect(findSecretsAsRead(`a ${token} b`)).toEqual(findSecrets(`a ${token} b`))
  })
})
