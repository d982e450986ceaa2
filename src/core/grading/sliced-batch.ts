/**
 * @module core/grading/sliced-batch
 * A large JSON-array reply (an origin's answer to a batch) read in slices of a {@link WorkSlices}
 * budget, yielding to the event loop between them: UTF-8 decoding, the pass that finds each
 * element and checks the nesting bound, and one `JSON.parse` per element. Each of these, done over
 * a 13 MB answer in one go, held every other client of the process for 100-400 ms on the shared
 * machine (docs/reliability.md "One POST does not hold the others").
 *
 * The outcome is the one the whole-text path of json-reply.ts gives for the same bytes: the same
 * element texts (trimmed of JSON white space, as core/jsonrpc/json-outline.ts spans them), the same
 * values, `too_deep` where the outline would find the nesting bound passed, and `invalid` exactly
 * when `JSON.parse` of the whole text would throw (the top level is checked here, each element by
 * its own parse). Pure; never throws.
 */
import { isWs } from '../jsonrpc/json-scan'
import type { WorkSlices } from '../work-slices'

/** The outcome of {@link readBatchInSlices}. */
export type SlicedBatch =
  /** `exact`: the bytes were valid UTF-8 (they may be relayed as they are). */
  { kind: 'batch'; exact: boolean; texts: string[]; values: unknown[] } | { kind: 'too_deep' } | { kind: 'invalid' }

/** Bytes decoded per step: texts this long are allocated outside the young generation, which the collector would otherwise copy while they live. */
const PART_BYTES = 256 * 1024

/**
 * True when the first byte that is not JSON white space is `[` (a batch answer; a byte order mark
 * is left to the whole-text path, which decodes it leniently).
 */
export function startsArray(bytes: Uint8Array): boolean {
  let i = 0
  while (i < bytes.length && isWs(bytes[i]!)) i++
  return bytes[i] === 0x5b
}

/**
 * Decodes, splits and parses a JSON-array reply in slices (module comment).
 * @param bytes the reply body; {@link startsArray} should hold
 * @param maxDepth `MAX_JSON_DEPTH` (the array itself is the first level)
 */
export async function readBatchInSlices(bytes: Uint8Array, maxDepth: number, budget: WorkSlices): Promise<SlicedBatch> {
  let exact = true
  let parts = await decodeInSlices(bytes, true, budget)
  if (parts === null) {
    // Not valid UTF-8: decoded again the lenient way (U+FFFD), as json-reply.ts does, and not relayed as bytes.
    exact = false
    parts = (await decodeInSlices(bytes, false, budget)) ?? []
  }
  const split = await splitInSlices(parts, maxDepth, budget)
  if (split.kind !== 'elements') return split
  const values: unknown[] = new Array(split.texts.length)
  // Results already parsed, by the text from the `result` value to the end of the message: a batch
  // of 100 `tools/list` holds one list 100 times, parsed once (and held once: the copies were most
  // of the garbage the collector then paused for).
  const results = new Map<string, { result: unknown }>()
  for (let i = 0; i < split.texts.length; i++) {
    const t = split.texts[i]!
    const at = resultValueStart(t)
    const held = at > 0 ? results.get(t.slice(at)) : undefined
    try {
      if (held) {
        // The members before `result` (short plain values) parsed on their own, the result shared.
        const v = JSON.parse(t.slice(0, at) + '0}') as Record<string, unknown>
        v.result = held.result
        values[i] = v
        continue
      }
      const v: unknown = JSON.parse(t)
      values[i] = v
      if (at > 0 && resultIsLast(t, at)) results.set(t.slice(at), { result: (v as Record<string, unknown>).result })
    } catch {
      return { kind: 'invalid' }
    }
    const pause = budget.spend(t.length)
    if (pause) await pause
  }
  return { kind: 'batch', exact, texts: split.texts, values }
}

async function decodeInSlices(bytes: Uint8Array, fatal: boolean, budget: WorkSlices): Promise<string[] | null> {
  const d = new TextDecoder('utf-8', { fatal })
  const parts: string[] = []
  try {
    for (let at = 0; at < bytes.length; at += PART_BYTES) {
      parts.push(d.decode(bytes.subarray(at, at + PART_BYTES), { stream: true }))
      const pause = budget.spend(PART_BYTES)
      if (pause) await pause
    }
    parts.push(d.decode())
  } catch {
    return null
  }
  return parts
}

type Split = { kind: 'elements'; texts: string[] } | { kind: 'too_deep' } | { kind: 'invalid' }

/**
 * The elements of the top-level array held by `parts` (consecutive pieces of one text): their
 * texts, trimmed. Brackets inside strings do not count. A top level that is not `[`, elements
 * separated by single commas, `]` and white space is `invalid`, but the scan goes on to the end
 * for the nesting bound, which the whole-text path checks first.
 */
async function splitInSlices(parts: string[], maxDepth: number, budget: WorkSlices): Promise<Split> {
  const texts: string[] = []
  let depth = 0
  let inString = false
  let escaped = false
  // 0: before the `[`; 1: in the array; 2: after the `]`.
  let phase = 0
  let bad = false
  // The element being read: pieces from earlier parts, and where it starts in this part (-1: none yet).
  let pieces: string[] = []
  let started = false
  // A comma was read and no element has started since (`[1,]` and `[,` are not JSON).
  let afterComma = false
  for (const part of parts) {
    let from = started ? 0 : -1
    const n = part.length
    for (let i = 0; i < n; i++) {
      const c = part.charCodeAt(i)
      if (inString) {
        if (escaped) escaped = false
        else if (c === 0x5c) escaped = true
        else if (c === 0x22) inString = false
        continue
      }
      if (phase !== 1) {
        if (isWs(c)) continue
        if (phase === 0 && c === 0x5b) {
          phase = 1
          depth = 1
          continue
        }
        // Anything else outside the array: not JSON; the scan goes on for the bound only.
        bad = true
        phase = 1
      }
      if (depth === 1 && !started) {
        if (isWs(c)) continue
        if (c === 0x2c || c === 0x5d) {
          // `,` or `]` where an element should start: only `[]` is an empty array.
          if (c === 0x2c || afterComma || texts.length > 0) bad = true
          if (c === 0x5d) {
            depth = 0
            phase = 2
          } else afterComma = true
          continue
        }
        started = true
        afterComma = false
        from = i
      }
      if (c === 0x22) inString = true
      else if (c === 0x7b || c === 0x5b) {
        if (++depth > maxDepth) return { kind: 'too_deep' }
      } else if (c === 0x7d || c === 0x5d) {
        depth--
        if (depth === 0) {
          // The array's `]` (or a `}` closing it: not JSON).
          if (c !== 0x5d) bad = true
          if (!bad) texts.push(elementText(pieces, part, from, i))
          pieces = []
          started = false
          phase = 2
        } else if (depth < 0) {
          bad = true
          depth = 0
        }
      } else if (c === 0x2c && depth === 1) {
        if (!bad) texts.push(elementText(pieces, part, from, i))
        pieces = []
        started = false
        afterComma = true
      }
    }
    if (started && !bad) pieces.push(part.slice(from))
    const pause = budget.spend(n)
    if (pause) await pause
  }
  if (phase !== 2 || inString) bad = true
  return bad ? { kind: 'invalid' } : { kind: 'elements', texts }
}

/**
 * True when the value starting at `at` is the last member of the message `t` (nothing but white
 * space and `}` after it), so that a message with the same text from `at` on has that result and
 * no other member from there: checked by parsing that value alone, once per distinct result.
 */
function resultIsLast(t: string, at: number): boolean {
  let e = t.length
  while (e > at && isWs(t.charCodeAt(e - 1))) e--
  if (t.charCodeAt(e - 1) !== 0x7d) return false
  try {
    JSON.parse(t.slice(at, e - 1))
    return true
  } catch {
    return false
  }
}

/** The text of an element from its pieces and `part[from, end)`, without the white space at its end. */
function elementText(pieces: string[], part: string, from: number, end: number): string {
  const t = pieces.length === 0 ? part.slice(from, end) : pieces.join('') + part.slice(from, end)
  let e = t.length
  while (e > 0 && isWs(t.charCodeAt(e - 1))) e--
  return e === t.length ? t : t.slice(0, e)
}

/** Members before `result` scanned at most (jsonrpc and id come first from every origin seen). */
const MAX_PREFIX = 512

function skipWsAt(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i)
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i
    i++
  }
}

/**
 * Where the value of the top-level member `result` of one JSON object's text starts, found by
 * walking the members before it; -1 when a member name holds an escape, a value before it is not
 * a string, number, boolean or null, or it lies past {@link MAX_PREFIX} characters.
 */
export function resultValueStart(text: string): number {
  let i = skipWsAt(text, 0)
  if (text.charCodeAt(i) !== 0x7b) return -1
  i++
  while (i < MAX_PREFIX) {
    i = skipWsAt(text, i)
    if (text.charCodeAt(i) !== 0x22) return -1
    const end = text.indexOf('"', i + 1)
    if (end < 0) return -1
    const name = text.slice(i + 1, end)
    if (name.includes('\\')) return -1
    i = skipWsAt(text, end + 1)
    if (text.charCodeAt(i) !== 0x3a) return -1
    i = skipWsAt(text, i + 1)
    if (name === 'result') return i
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      let q = text.indexOf('"', i + 1)
      while (q > 0 && text.charCodeAt(q - 1) === 0x5c) {
        let k = q - 1
        while (text.charCodeAt(k) === 0x5c) k--
        if ((q - 1 - k) % 2 === 0) break
        q = text.indexOf('"', q + 1)
      }
      if (q < 0) return -1
      i = q + 1
    } else if (c === 0x7b || c === 0x5b) return -1
    else {
      while (i < text.length && !',}'.includes(text[i]!) && text.charCodeAt(i) > 0x20) i++
    }
    i = skipWsAt(text, i)
    if (text.charCodeAt(i) !== 0x2c) return -1
    i++
  }
  return -1
}
