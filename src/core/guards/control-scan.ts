/**
 * @module core/guards/control-scan
 * The hidden-character detector of the result checks (guards/result-control.ts,
 * docs/result-checks.md#hidden-characters): escape sequences, C0 and C1 controls, bidi controls,
 * zero-width characters and Unicode tag characters in one string. One native search for a class of
 * code points plus a hand parse of each escape that reads each character a bounded number of
 * times: linear in the text. Pure and runtime-neutral.
 */
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

/** What a string without hidden characters gets: one shared empty list, so a clean string costs the search and nothing else. */
const NONE: readonly ControlSpan[] = Object.freeze([])

/** The hidden characters and escapes of one string, in order, not overlapping; linear in its length. */
export function findControls(s: string): readonly ControlSpan[] {
  const re = START
  re.lastIndex = 0
  let m = re.exec(s)
  if (m === null) return NONE
  const out: ControlSpan[] = []
  const memo: BodyMemo = { from: -1, stop: -2 }
  for (; m !== null; m = re.exec(s)) {
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
