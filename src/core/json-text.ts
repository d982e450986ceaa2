/**
 * @module json-text
 * A structural scan of JSON text that `JSON.parse` already accepted. It finds what `JSON.parse`
 * throws away and the edge needs:
 * - duplicate member names anywhere inside a message (RFC 8259 §4 "names SHOULD be unique"; a
 *   validator that sees the last value while the origin reads the first is a bypass, vector 61);
 * - the text span of every top-level batch element, so a sub-batch is forwarded byte for byte;
 * - the text span of each member of a message object, so ids are echoed as their exact token
 *   (integers past 2^53, vector 31/32).
 *
 * Written here because no JSON library reports both duplicate names and source spans without
 * building a second value tree; this scan builds nothing and costs one pass over the text.
 * Pure; never throws on text that `JSON.parse` accepted.
 */

/** Start (inclusive) and end (exclusive) offsets, in UTF-16 code units, of a JSON value. */
export interface Span {
  start: number
  end: number
}

/** One message position: a top-level value or, for an array body, one element of it. */
export interface ScannedElement extends Span {
  /** Members of the element when it is an object: name -> span of the value. */
  members: Map<string, Span> | null
  /** True when this element (at any depth) holds an object with a repeated member name. */
  duplicateNames: boolean
}

/** Result of {@link scanJsonText}. */
export interface JsonScan {
  /** True when the top-level value is an array (a JSON-RPC batch). */
  isArray: boolean
  /** The single top-level value, or each element of a top-level array, in order. */
  elements: ScannedElement[]
}

interface Frame {
  isObject: boolean
  keys: Set<string> | null
  expectKey: boolean
  pendingKey: string
  childStart: number
  /** The element record this frame fills, when it is a message object. */
  element: ScannedElement | null
}

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/**
 * Scans JSON text that `JSON.parse` accepted. Offsets refer to `text`.
 * @param text valid JSON text
 * @returns the top-level elements with member spans and duplicate-name flags
 */
export function scanJsonText(text: string): JsonScan {
  const n = text.length
  let i = 0
  while (i < n && isWs(text.charCodeAt(i))) i++
  // Without any backslash in the text no string holds an escape: its end is the next quote.
  const noEscapes = !text.includes('\\')
  const isArray = text.charCodeAt(i) === 0x5b
  const elements: ScannedElement[] = []
  const stack: Frame[] = []
  // The element whose subtree we are in (for duplicate-name flags).
  let current = null as ScannedElement | null

  const trimEnd = (end: number): number => {
    while (end > 0 && isWs(text.charCodeAt(end - 1))) end--
    return end
  }
  const closeChild = (frame: Frame, at: number): void => {
    if (frame.childStart < 0) return
    const span = { start: frame.childStart, end: trimEnd(at) }
    if (frame.element?.members && frame.isObject) frame.element.members.set(frame.pendingKey, span)
    if (isArray && stack.length === 1 && frame === stack[0]) {
      const el = elements[elements.length - 1]
      if (el) el.end = span.end
    }
    frame.childStart = -1
  }
  const beginValue = (at: number): void => {
    const top = stack[stack.length - 1]
    if (top && top.childStart < 0) top.childStart = at
    if (!top && !isArray) {
      current = { start: at, end: n, members: null, duplicateNames: false }
      elements.push(current)
    } else if (isArray && stack.length === 1) {
      current = { start: at, end: at, members: null, duplicateNames: false }
      elements.push(current)
    }
  }

  while (i < n) {
    const c = text.charCodeAt(i)
    if (isWs(c)) {
      i++
      continue
    }
    const top = stack[stack.length - 1]
    if (c === 0x22) {
      // string
      const s = i
      i++
      let escaped = false
      if (noEscapes) {
        i = text.indexOf('"', i)
        if (i < 0) i = n // unreachable for text JSON.parse accepted; never loop
      } else while (i < n) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) {
          escaped = true
          i += 2
          continue
        }
        if (d === 0x22) break
        i++
      }
      i++ // past closing quote
      if (top && top.isObject && top.expectKey) {
        const rawKey = text.slice(s + 1, i - 1)
        const key = escaped ? (JSON.parse(text.slice(s, i)) as string) : rawKey
        if (top.keys!.has(key)) {
          if (current) current.duplicateNames = true
        } else top.keys!.add(key)
        top.pendingKey = key
        top.expectKey = false
      } else {
        beginValue(s)
      }
      continue
    }
    if (c === 0x7b || c === 0x5b) {
      beginValue(i)
      const isObj = c === 0x7b
      const isMessage = isObj && (isArray ? stack.length === 1 : stack.length === 0)
      if (isMessage && current) current.members = new Map()
      stack.push({
        isObject: isObj,
        keys: isObj ? new Set() : null,
        expectKey: isObj,
        pendingKey: '',
        childStart: -1,
        element: isMessage ? current : null,
      })
      i++
      continue
    }
    if (c === 0x7d || c === 0x5d) {
      if (top) closeChild(top, i)
      stack.pop()
      i++
      if (stack.length === 0 && !isArray && current) current.end = i
      continue
    }
    if (c === 0x2c) {
      if (top) {
        closeChild(top, i)
        if (top.isObject) top.expectKey = true
      }
      i++
      continue
    }
    if (c === 0x3a) {
      i++
      continue
    }
    // number or literal
    beginValue(i)
    while (i < n) {
      const d = text.charCodeAt(i)
      if (isWs(d) || d === 0x2c || d === 0x7d || d === 0x5d) break
      i++
    }
    if (stack.length === 0 && current) current.end = i
  }
  return { isArray, elements }
}

/** The text of a member's value inside a scanned element, or undefined. */
export function memberText(text: string, el: ScannedElement | undefined, name: string): string | undefined {
  const span = el?.members?.get(name)
  return span ? text.slice(span.start, span.end) : undefined
}
