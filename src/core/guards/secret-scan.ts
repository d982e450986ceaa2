/**
 * @module core/guards/secret-scan
 * The credential detector of the result checks (guards/result-secrets.ts): the edge's own list of
 * the token shapes secretlint's recommended preset and gitleaks cover (docs/result-checks.md,
 * "Categories"). Every rule starts with a fixed prefix, found by one native search for a set of
 * literals, and is then checked by hand over bounded character runs, so the scan is linear in the
 * text on adversarial input. Exact token lengths and word boundaries keep look-alikes out. Pure and
 * runtime-neutral.
 */
/** One credential found: `[start, end)` in the string, and its category. */
export interface SecretSpan {
  start: number
  end: number
  category: string
}

/** The categories the scan reports (docs/result-checks.md#categories). */
export const SECRET_CATEGORIES = [
  'private_key',
  'aws_access_key_id',
  'aws_secret_access_key',
  'github_token',
  'slack_token',
  'slack_webhook',
  'google_api_key',
  'stripe_live_key',
  'npm_token',
  'openai_api_key',
  'anthropic_api_key',
  'sendgrid_api_key',
  'shopify_token',
  'linear_api_key',
] as const

const ALNUM = /[A-Za-z0-9]/
/** A character that joins a token to a word before it (`xAKIA...` is no key id). */
const WORD = /[A-Za-z0-9_]/

const isUpperAlnum = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90)
const isAlnum = (c: number) => isUpperAlnum(c) || (c >= 97 && c <= 122)
const isAlnumUnder = (c: number) => isAlnum(c) || c === 95
const isAlnumUnderDash = (c: number) => isAlnumUnder(c) || c === 45
const isAlnumDash = (c: number) => isAlnum(c) || c === 45
const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70)
const isBase64 = (c: number) => isAlnum(c) || c === 43 || c === 47
const isSlackPath = (c: number) => isAlnum(c) || c === 47

/** The end of the run of `ok` characters from `at`, reading at most `max` of them. */
function run(s: string, at: number, ok: (c: number) => boolean, max: number): number {
  const stop = Math.min(s.length, at + max)
  let i = at
  while (i < stop && ok(s.charCodeAt(i))) i++
  return i
}

/**
 * A token of exactly `len` (or `min`..`max`) `ok` characters after the prefix, not followed by
 * another `ok` character. Returns its end, or -1.
 */
function token(s: string, at: number, ok: (c: number) => boolean, min: number, max = min): number {
  const end = run(s, at, ok, max + 1)
  return end - at >= min && end - at <= max ? end : -1
}

/** A rule: the literal prefixes that start it, and the check of what follows (the span's end, or -1). */
interface Rule {
  category: (typeof SECRET_CATEGORIES)[number]
  prefixes: readonly string[]
  /** Where the redaction starts relative to the prefix: `prefix` (the whole token) or `value` (only what `check` says). */
  check(s: string, start: number, afterPrefix: number, state: ScanState): { from: number; end: number } | null
  /** A word character may stand before the prefix (`aws_secret_access_key` inside `MY_AWS_SECRET_ACCESS_KEY`). */
  anyBefore?: boolean
}

/** Memo of the private-key body scan, so a header repeated many times before one footer reads the body once. */
interface ScanState {
  bodyFrom: number
  bodyTo: number
  footerAt: number
}

const PEM_HEADER = /^(?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----/
const PEM_FOOTER = /^-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----/
/** Characters of a PEM body: base64, line breaks (as characters or as the two characters `\n` of JSON text), and the `Proc-Type: 4,ENCRYPTED` headers. */
const isPemBody = (c: number) => isBase64(c) || c === 61 || c === 10 || c === 13 || c === 32 || c === 9 || c === 92 || c === 58 || c === 44 || c === 45 || c === 46
/** Most characters between a key's header and footer (a 16384-bit RSA key is about 12,700). */
const PEM_MAX_BODY = 32_768
/** Fewest body characters for a block to be a key (a header and footer around prose is not). */
const PEM_MIN_BODY = 64

const RULES: readonly Rule[] = [
  {
    category: 'private_key',
    prefixes: ['-----BEGIN '],
    anyBefore: true,
    check(s, start, after, st) {
      const head = PEM_HEADER.exec(s.slice(after, after + 64))
      if (!head) return null
      const bodyFrom = after + head[0].length
      // The body runs to the first character that cannot be in one, or to a footer; a body
      // scanned for an earlier header that this one falls inside ends at the same place.
      let footerAt: number
      if (bodyFrom >= st.bodyFrom && bodyFrom <= st.bodyTo) footerAt = st.footerAt
      else {
        let i = bodyFrom
        footerAt = -1
        while (i < s.length) {
          const c = s.charCodeAt(i)
          if (c === 45 && s.startsWith('-----END ', i)) {
            footerAt = i
            break
          }
          if (!isPemBody(c)) break
          i++
        }
        st.bodyFrom = bodyFrom
        st.bodyTo = i
        st.footerAt = footerAt
      }
      if (footerAt < 0 || footerAt - bodyFrom < PEM_MIN_BODY || footerAt - bodyFrom > PEM_MAX_BODY) return null
      const foot = PEM_FOOTER.exec(s.slice(footerAt, footerAt + 80))
      return foot ? { from: start, end: footerAt + foot[0].length } : null
    },
  },
  {
    category: 'aws_access_key_id',
    prefixes: ['AKIA', 'ASIA', 'ABIA', 'ACCA'],
    check: (s, start, after) => {
      const end = token(s, after, isUpperAlnum, 16)
      return end > 0 && !(end < s.length && ALNUM.test(s[end]!)) ? { from: start, end } : null
    },
  },
  {
    category: 'aws_secret_access_key',
    prefixes: ['aws_secret_access_key', 'AWS_SECRET_ACCESS_KEY', 'SecretAccessKey', 'secretAccessKey', 'aws_secret_key', 'AWS_SECRET_KEY'],
    anyBefore: true,
    check: (s, _start, after) => {
      // `= "..."`, `": "...`, `: ...`: up to 6 separator characters, then exactly 40 of base64.
      let i = after
      const stop = Math.min(s.length, after + 6)
      while (i < stop && ' \t"\':=\\'.includes(s[i]!)) i++
      if (i === after) return null
      const end = token(s, i, isBase64, 40)
      return end > 0 ? { from: i, end } : null
    },
  },
  {
    category: 'github_token',
    prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    check: (s, start, after) => {
      const end = token(s, after, isAlnum, 36)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'github_token',
    prefixes: ['github_pat_'],
    check: (s, start, after) => {
      const end = token(s, after, isAlnumUnder, 82)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'slack_token',
    prefixes: ['xoxb-', 'xoxp-', 'xoxa-', 'xoxo-', 'xoxs-', 'xoxr-', 'xoxe-', 'xapp-'],
    check: (s, start, after) => {
      // Slack tokens are numbered parts and a secret: `xoxb-<digits>-<digits>-<alnum>`; at least 20 characters, a digit first.
      const c = s.charCodeAt(after)
      if (!(c >= 48 && c <= 57)) return null
      const end = token(s, after, isAlnumDash, 20, 255)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'slack_webhook',
    prefixes: ['https://hooks.slack.com/services/', 'https://hooks.slack.com/workflows/'],
    anyBefore: true,
    check: (s, start, after) => {
      const end = token(s, after, isSlackPath, 40, 120)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'google_api_key',
    prefixes: ['AIza'],
    check: (s, start, after) => {
      const end = token(s, after, isAlnumUnderDash, 35)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'stripe_live_key',
    prefixes: ['sk_live_', 'rk_live_'],
    check: (s, start, after) => {
      const end = token(s, after, isAlnum, 24, 247)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'npm_token',
    prefixes: ['npm_'],
    check: (s, start, after) => {
      const end = token(s, after, isAlnum, 36)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'openai_api_key',
    prefixes: ['sk-proj-', 'sk-svcacct-', 'sk-admin-'],
    check: (s, start, after) => {
      const end = token(s, after, isAlnumUnderDash, 40, 400)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'anthropic_api_key',
    prefixes: ['sk-ant-'],
    check: (s, start, after) => {
      const end = token(s, after, isAlnumUnderDash, 80, 400)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'sendgrid_api_key',
    prefixes: ['SG.'],
    check: (s, start, after) => {
      const mid = token(s, after, isAlnumUnderDash, 22)
      if (mid < 0 || s[mid] !== '.') return null
      const end = token(s, mid + 1, isAlnumUnderDash, 43)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'shopify_token',
    prefixes: ['shpat_', 'shpca_', 'shppa_', 'shpss_'],
    check: (s, start, after) => {
      const end = token(s, after, isHex, 32)
      return end > 0 ? { from: start, end } : null
    },
  },
  {
    category: 'linear_api_key',
    prefixes: ['lin_api_'],
    check: (s, start, after) => {
      const end = token(s, after, isAlnum, 40)
      return end > 0 ? { from: start, end } : null
    },
  },
]

const BY_PREFIX = new Map<string, Rule>()
for (const r of RULES) for (const p of r.prefixes) BY_PREFIX.set(p, r)

/**
 * Every prefix as one alternation of literals (longest first, so `github_pat_` is not read as
 * something shorter): no quantifier, so the native engine's work per position is bounded.
 */
const PREFIXES = new RegExp(
  [...BY_PREFIX.keys()]
    .sort((a, b) => b.length - a.length)
    .map((p) => p.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('|'),
  'g'
)

/** What a string without credentials gets: one shared empty list. */
const NONE: readonly SecretSpan[] = Object.freeze([])

/** Shortest string any rule can match (`AKIA` and 16 characters): shorter strings are not scanned. */
const MIN_SECRET = 20

/**
 * The credentials in one string, in order, not overlapping. Linear in the length of `s` (module
 * comment); never throws.
 */
export function findSecrets(s: string): readonly SecretSpan[] {
  if (s.length < MIN_SECRET) return NONE
  const re = PREFIXES
  re.lastIndex = 0
  let m = re.exec(s)
  // No prefix, no finding: a clean string costs the one search and allocates nothing.
  if (m === null) return NONE
  let out: SecretSpan[] | null = null
  const st: ScanState = { bodyFrom: -1, bodyTo: -2, footerAt: -1 }
  for (; m !== null; m = re.exec(s)) {
    const start = m.index
    const rule = BY_PREFIX.get(m[0])!
    if (!rule.anyBefore && start > 0 && WORD.test(s[start - 1]!)) continue
    const hit = rule.check(s, start, start + m[0].length, st)
    if (!hit) continue
    ;(out ??= []).push({ start: hit.from, end: hit.end, category: rule.category })
    re.lastIndex = hit.end
  }
  return out ?? NONE
}

/** `s` with each span replaced by `[REDACTED:<category>]`, the rest as it was. */
export function redactSecrets(s: string, spans: readonly SecretSpan[]): string {
  let out = ''
  let at = 0
  for (const sp of spans) {
    out += s.slice(at, sp.start) + `[REDACTED:${sp.category}]`
    at = sp.end
  }
  return out + s.slice(at)
}
