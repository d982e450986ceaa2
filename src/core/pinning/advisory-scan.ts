/**
 * @module core/pinning/advisory-scan
 * Advisory findings on a tool definition, shown to the operator who approves it (docs/pinning.md
 * "Advisory scan"). Heuristics only: a finding never blocks, approves or rejects anything, and no
 * finding does not mean safe.
 *
 * Every string in the whole definition is scanned, and every member name: `name`, `title`,
 * `description`, parameter names (the keys under `inputSchema.properties`), `enum` and `const`
 * values, `default`s, `examples`, `outputSchema`, `annotations`, `icons`, `_meta`, unknown members
 * (CyberArk "full-schema poisoning": any of them reaches the model). What is flagged:
 *
 * | kind                | what                                                                                   | source |
 * |---------------------|----------------------------------------------------------------------------------------|--------|
 * | `agent-instruction` | text addressed to the agent: "ignore previous instructions", "do not tell the user", "before using this tool, ..." | Invariant Labs tool poisoning; Trail of Bits line jumping |
 * | `instruction-tag`   | `<IMPORTANT>`, `<SYSTEM>`, `<instructions>`-style tags, `[INST]`, `<\|im_start\|>` tokens | Invariant Labs PoC |
 * | `invisible-unicode` | zero-width and bidi controls (U+200B-200F, U+202A-202E, U+2060-2064, U+2066-2069, U+FEFF, U+00AD, U+180E) and Unicode tag characters (U+E0000-E007F) | Trojan Source; ASCII smuggling |
 * | `ansi-escape`       | ESC (U+001B) or CSI (U+009B): terminal escapes that hide text from a human reviewer       | Trail of Bits |
 * | `control-character` | any other C0/C1 control or DEL (tab, LF, CR excepted)                                     | |
 * | `credential-path`   | `~/.ssh`, `id_rsa`, `.aws/credentials`, `.env`, `/etc/passwd`, `.npmrc`, `.kube/config`, MCP client configs ... | Invariant Labs PoC (`~/.cursor/mcp.json`, `~/.ssh/id_rsa`) |
 *
 * Instruction phrases are matched on a normalized copy of the text (NFKC, invisible characters
 * removed, lower case, runs of white space as one space), so `ig\u200Bnore  PREVIOUS instructions`
 * is found too. Each finding names the display-safe JSON Pointer (RFC 6901) of the string and
 * whether the text is the member's name (`key`) or its value, a short reason, and an excerpt of at
 * most {@link MAX_EXCERPT} characters, escaped (display-text.ts); never more of the definition.
 *
 * Every pattern is a plain regular expression with bounded repetition only (no nested or adjacent
 * unbounded quantifiers), so matching is linear in the text's length (test/unit/pinning checks each
 * with safe-regex2). The walk is iterative (no recursion limit on deep schemas) and stops after
 * {@link MAX_FINDINGS} findings. Pure; never throws.
 */
import { displayPointer, displayText, pathOf, type PathLink } from './display-text'

/** The kinds of advisory finding (module comment table). */
export type AdvisoryKind = 'agent-instruction' | 'instruction-tag' | 'invisible-unicode' | 'ansi-escape' | 'control-character' | 'credential-path'

/** One advisory finding. */
export interface AdvisoryFinding {
  kind: AdvisoryKind
  /** The JSON Pointer of the value (or of the member whose name holds the text), bounded and escaped for display. */
  pointer: string
  /** `key`: the text is the member's name (e.g. a parameter name); `value`: the string value. */
  in: 'key' | 'value'
  /** Why it was flagged, in a few edge-written words. */
  reason: string
  /**
   * At most {@link MAX_EXCERPT} characters around the match, escaped (display-text.ts); for
   * `agent-instruction`, taken from the normalized text (lower case, invisible characters removed).
   */
  excerpt: string
}

/** The findings on one definition. */
export interface AdvisoryReport {
  /** In walk order: members sorted by name, then array elements in order. */
  findings: AdvisoryFinding[]
  /** Whether more findings were found than {@link MAX_FINDINGS} (the scan stopped at the first one past it). */
  truncated: boolean
}

/** Upper bound of findings per definition. */
export const MAX_FINDINGS = 50
/** Upper bound of an excerpt's length (UTF-16 code units, after escaping). */
export const MAX_EXCERPT = 80
/** Characters of context kept on each side of a match in an excerpt (before escaping). */
const CONTEXT = 20

interface Rule {
  kind: AdvisoryKind
  reason: string
  pattern: RegExp
  /** Matched on the normalized text (instruction phrases) rather than the raw text. */
  normalized?: boolean
}

/**
 * The rules, exported for the linear-time check in the tests. Patterns are case-insensitive and
 * written for text where white space runs are already one space (normalized rules).
 */
export const RULES: readonly Rule[] = [
  {
    kind: 'agent-instruction',
    reason: 'asks the agent to ignore its instructions',
    pattern:
      /\b(?:ignore|disregard|forget|override)(?: all| any)?(?: the| your| of the)? (?:previous|prior|above|earlier|preceding|original|other|system) (?:instructions|prompts?|rules|directions|messages)/i,
    normalized: true,
  },
  {
    kind: 'agent-instruction',
    reason: 'asks the agent to hide something from the user',
    pattern:
      /\b(?:(?:do not|don't|dont|never|must not) (?:tell|inform|notify|alert|mention|reveal|show|disclose|explain)(?: this| it| that| anything)?(?: to)?(?: the)? user|without (?:telling|informing|notifying|alerting|asking|showing) (?:the )?user|(?:the )?user (?:must|should|need) not (?:know|see|notice|be told))/i,
    normalized: true,
  },
  {
    kind: 'agent-instruction',
    reason: 'tells the agent what to do before or instead of using a tool',
    pattern: /\b(?:before (?:using|calling|invoking|running|you use|you call) (?:this|the|any|other) tools?|instead of (?:using |calling )?(?:the |any )?[^.]{0,40}\btool)/i,
    normalized: true,
  },
  {
    kind: 'agent-instruction',
    reason: 'addresses the agent as a system or with new instructions',
    pattern: /\b(?:system prompt|new instructions|important instructions|hidden instructions|as an ai\b|you are now\b|this is (?:very |extremely )?important\b)/i,
    normalized: true,
  },
  {
    kind: 'instruction-tag',
    reason: 'an instruction-style tag',
    pattern:
      /<\s{0,3}\/?\s{0,3}(?:important|system|instructions?|secret|hidden|admin|critical|prompt|assistant|im_start|im_end)\b[^>]{0,40}>|\[\s{0,3}\/?\s{0,3}(?:inst|system|important)\s{0,3}\]|<\|[a-z_]{1,20}\|>/i,
  },
  {
    kind: 'invisible-unicode',
    reason: 'invisible or bidi-control Unicode characters',
    pattern: /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|\uDB40[\uDC00-\uDC7F]/,
  },
  { kind: 'ansi-escape', reason: 'a terminal escape sequence (ESC or CSI)', pattern: /[\u001B\u009B]/ },
  { kind: 'control-character', reason: 'a control character', pattern: /[\u0000-\u0008\u000B\u000C\u000E-\u001A\u001C-\u001F\u007F-\u009A\u009C-\u009F]/ },
  {
    kind: 'credential-path',
    reason: 'names a credential or secret file',
    pattern:
      /(?:~\/\.ssh\b|\.ssh\/|id_(?:rsa|dsa|ecdsa|ed25519)(?![a-z0-9])|\.aws\/(?:credentials|config)\b|(?:^|[^\w.])\.env\b|\/etc\/(?:passwd|shadow|sudoers)\b|\.npmrc\b|\.netrc\b|\.pgpass\b|\.git-credentials\b|\.docker\/config\.json\b|\.kube\/config\b|\.gnupg\b|\bauthorized_keys\b|\.config\/gcloud\b|\.cursor\/mcp\.json\b|\bclaude_desktop_config\.json\b|\.bash_history\b|\/proc\/self\/environ\b)/i,
  },
]

/** Characters removed before instruction phrases are matched (the invisible-unicode set). */
const INVISIBLE = /[\u00AD\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|\uDB40[\uDC00-\uDC7F]/g

/** The text instruction phrases are matched on (module comment). */
export function normalizeForScan(text: string): string {
  let t = text
  try {
    t = t.normalize('NFKC')
  } catch {
    // normalize never throws on a string; kept defensive for non-ICU builds.
  }
  return t.replace(INVISIBLE, '').replace(/\s+/g, ' ').toLowerCase()
}

function excerpt(text: string, index: number, length: number): string {
  const start = Math.max(0, index - CONTEXT)
  const end = Math.min(text.length, index + length + CONTEXT)
  return (start > 0 ? '…' : '') + displayText(text.slice(start, end), MAX_EXCERPT - 2) + (end < text.length ? '…' : '')
}

/**
 * Scans one tool definition (module comment).
 * @param tool a tool definition as parsed (any JSON value; a non-object is scanned as one value)
 * @returns the findings, at most {@link MAX_FINDINGS}, and whether more were left unreported
 */
export function scanToolDefinition(tool: unknown): AdvisoryReport {
  const findings: AdvisoryFinding[] = []
  let truncated = false
  const scanText = (text: string, path: PathLink | null, where: 'key' | 'value'): void => {
    let normalized: string | undefined
    for (const rule of RULES) {
      const subject = rule.normalized ? (normalized ??= normalizeForScan(text)) : text
      const m = rule.pattern.exec(subject)
      if (!m) continue
      if (findings.length >= MAX_FINDINGS) {
        truncated = true
        return
      }
      findings.push({ kind: rule.kind, pointer: displayPointer(pathOf(path)), in: where, reason: rule.reason, excerpt: excerpt(subject, m.index, m[0].length) })
    }
  }
  // A stack of values to walk and member names to scan (iterative: deep schemas cannot overflow the call stack).
  const stack: ({ key: string; path: PathLink } | { v: unknown; path: PathLink | null })[] = [{ v: tool, path: null }]
  while (stack.length > 0 && !truncated) {
    const item = stack.pop()!
    if ('key' in item) {
      scanText(item.key, item.path, 'key')
      continue
    }
    const { v, path } = item
    if (typeof v === 'string') scanText(v, path, 'value')
    else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: { key: i, parent: path } })
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v).sort()
      // Pushed in reverse, value before name: each member's name is scanned just before its value.
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!
        const at: PathLink = { key: k, parent: path }
        stack.push({ v: (v as Record<string, unknown>)[k], path: at }, { key: k, path: at })
      }
    }
  }
  return { findings, truncated }
}

/**
 * Scans an origin's server `instructions` (the text of an `initialize` or `server/discover`
 * result) with the same rules as a tool definition: the findings' pointer is `""` (the text itself).
 * @param text the `instructions` string as served
 */
export function scanInstructions(text: string): AdvisoryReport {
  return scanToolDefinition(text)
}
