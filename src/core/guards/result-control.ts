/**
 * @module core/guards/result-control
 * `RESULT_CONTROL` (docs/result-checks.md#hidden-characters): characters in a tool result that a
 * person reading the transcript does not see but the model reads, or that drive the reader's
 * terminal: escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ST`, the other ECMA-48
 * string and two-character escapes, and their C1 forms), C0 controls other than tab, line feed and
 * carriage return, C1 controls (U+0080-U+009F), bidi controls (U+202A-U+202E, U+2066-U+2069) and
 * zero-width characters (U+200B-U+200D, U+2060, U+FEFF) and Unicode tag characters (U+E0000-U+E007F,
 * outside an emoji flag's tag sequence). `audit` (default) logs and counts them,
 * the answer unchanged byte for byte; `strip` removes them (a whole escape sequence, or the lone
 * character) and nothing else. DEL (U+007F), tab, line feed and carriage return are kept. The scan
 * is one native search for a class of code points plus a hand parse of each escape that reads each
 * character a bounded number of times: linear in the text. Pure and runtime-neutral.
 */
import type { ReplyGuard, ReplyGuardContext, ReplyUnderCheck, ReplyVerdict } from './guard'
import type { Config } from '../config'
import { visitResultText } from './result-text'

/** The categories the scan reports. */
export type ControlCategory = 'terminal_escape' | 'c0_control' | 'c1_control' | 'bidi_control' | 'zero_width' | 'tag_character'

/** One hidden character or escape sequence: `[start, end)` in the string. */
export interface ControlSpan {
  start: number
  end: number
  category: ControlCategory
}

/** Every code point that starts a finding. */
const START = /[\x00-\x08\x0b\x0c\x0e-\x1f\x80-\x9f\u200b-\u200d\u2060\ufeff\u202a-\u202e\u2066-\u2069]|\udb40[\udc00-\udc7f]/g

const ESC = 0x1b
const BEL = 0x07
const ST = 0x9c

/**
 * Memo of the last control-string body read: from `from` the first BEL, ST or ESC is at `stop`
 * (`s.length` when none). Any later body that starts inside `[from, stop]` ends at the same place,
 * so thousands of unterminated introducers (C1 OSC, DCS, ...) read the text once, not once each.
 */
interface BodyMemo {
  from: number
  stop: number
}

/** The end of a control string (OSC, DCS, SOS, PM, APC) whose body starts at `at`: past BEL, `ESC \` or ST; -1 when another escape or the end comes first. */
function controlStringEnd(s: string, at: number, memo: BodyMemo): number {
  let i: number
  if (at >= memo.from && at <= memo.stop) i = memo.stop
  else {
    i = at
    while (i < s.length) {
      const c = s.charCodeAt(i)
      if (c === BEL || c === ST || c === ESC) break
      i++
    }
    memo.from = at
    memo.stop = i
  }
  if (i >= s.length) return -1
  const c = s.charCodeAt(i)
  if (c === BEL || c === ST) return i + 1
  return s.charCodeAt(i + 1) === 0x5c ? i + 2 : -1
}

/** The end of a CSI whose parameters start at `at` (parameter bytes, intermediate bytes, one final byte), or -1. */
function csiEnd(s: string, at: number): number {
  let i = at
  while (i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x3f) i++
  while (i < s.length && s.charCodeAt(i) >= 0x20 && s.charCodeAt(i) <= 0x2f) i++
  const f = s.charCodeAt(i)
  return f >= 0x40 && f <= 0x7e ? i + 1 : -1
}

/** The high surrogate of every Unicode tag character (U+E0000-U+E007F). */
const TAG_HIGH = 0xdb40

/** The end of the run of Unicode tag characters (surrogate pairs U+DB40 U+DC00-U+DC7F) that starts at `i`. */
function tagRunEnd(s: string, i: number): number {
  let j = i
  while (s.charCodeAt(j) === TAG_HIGH && s.charCodeAt(j + 1) >= 0xdc00 && s.charCodeAt(j + 1) <= 0xdc7f) j += 2
  return j
}

/** The span of the escape that starts with ESC at `i` (at least the ESC itself). */
function escapeEnd(s: string, i: number, memo: BodyMemo): number {
  const n = s.charCodeAt(i + 1)
  if (n === 0x5b) return Math.max(csiEnd(s, i + 2), i + 1) // ESC [
  // ESC ] (OSC), ESC P (DCS), ESC X (SOS), ESC ^ (PM), ESC _ (APC)
  if (n === 0x5d || n === 0x50 || n === 0x58 || n === 0x5e || n === 0x5f) return Math.max(controlStringEnd(s, i + 2, memo), i + 1)
  // Any other escape: intermediate bytes, then one final byte.
  let j = i + 1
  while (j < s.length && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x2f) j++
  const f = s.charCodeAt(j)
  return f >= 0x30 && f <= 0x7e ? j + 1 : i + 1
}

/** The hidden characters and escapes of one string, in order, not overlapping; linear in its length. */
export function findControls(s: string): ControlSpan[] {
  const out: ControlSpan[] = []
  const memo: BodyMemo = { from: -1, stop: -2 }
  const re = START
  re.lastIndex = 0
  let m: RegExpExecArray | null
  while ((m = re.exec(s)) !== null) {
    const i = m.index
    const c = s.charCodeAt(i)
    let end = i + 1
    let category: ControlCategory
    if (c === TAG_HIGH) {
      // Unicode tag characters (U+E0000-U+E007F): invisible, and a model reads them as ASCII
      // ("ASCII smuggling"). A run of them right after U+1F3F4 that ends with CANCEL TAG
      // (U+E007F) is an emoji flag (England, Scotland, Wales) and is kept.
      end = tagRunEnd(s, i)
      const flag = i >= 2 && s.charCodeAt(i - 2) === 0xd83c && s.charCodeAt(i - 1) === 0xdff4 && s.charCodeAt(end - 1) === 0xdc7f
      if (flag) {
        re.lastIndex = end
        continue
      }
      category = 'tag_character'
    } else if (c === ESC) {
      end = escapeEnd(s, i, memo)
      category = 'terminal_escape'
    } else if (c === 0x9b) {
      end = Math.max(csiEnd(s, i + 1), i + 1)
      category = 'terminal_escape'
    } else if (c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f) {
      end = Math.max(controlStringEnd(s, i + 1, memo), i + 1)
      category = 'terminal_escape'
    } else if (c < 0x20) category = 'c0_control'
    else if (c <= 0x9f) category = 'c1_control'
    else if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)) category = 'bidi_control'
    else category = 'zero_width'
    out.push({ start: i, end, category })
    re.lastIndex = end
  }
  return out
}

/** `s` without the spans. */
export function stripControls(s: string, spans: readonly ControlSpan[]): string {
  let out = ''
  let at = 0
  for (const sp of spans) {
    out += s.slice(at, sp.start)
    at = sp.end
  }
  return out + s.slice(at)
}

/** The guard of `RESULT_CONTROL`, or null when it is `off`. */
export function resultControlGuard(config: Config): ReplyGuard | null {
  const mode = config.resultControl
  if (mode === 'off') return null
  return {
    name: 'result_control',
    phase: 'reply',
    stage: mode === 'strip' ? 'mutate' : 'judge',
    reads: 'result',
    appliesTo: (method) => method === 'tools/call',
    check({ result }: ReplyUnderCheck, ctx: ReplyGuardContext): ReplyVerdict {
      let any = false
      const changed = visitResultText(result, (text, at) => {
        const spans = findControls(text)
        if (spans.length === 0) return null
        any = true
        const counts = new Map<string, number>()
        for (const sp of spans) counts.set(sp.category, (counts.get(sp.category) ?? 0) + 1)
        for (const [category, count] of counts) ctx.report?.({ check: 'result_control', category, action: mode, at: at(), count })
        return mode === 'strip' ? stripControls(text, spans) : null
      })
      return any && mode === 'strip' ? { kind: 'change', result: changed } : { kind: 'pass' }
    },
  }
}
