/**
 * @module core/jsonrpc/json-scan
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

/** True for JSON white space (RFC 8259 §2: space, tab, line feed, carriage return), given a UTF-16 code unit. */
export function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
}

/**
 * Default bound of JSON nesting (arrays and objects inside each other) for request bodies and
 * origin replies (`MAX_JSON_DEPTH`). A JSON-RPC request uses 3 levels before the tool's
 * arguments (message, `params`, `arguments`), a batch one more.
 */
export const DEFAULT_MAX_JSON_DEPTH = 64

/**
 * True when `text` holds at most `maxDepth` opening brackets (`[` and `{`, in strings or not):
 * then nothing in it can nest deeper than `maxDepth`, since every level opens with one. Two native
 * `indexOf` sweeps that stop at the bracket past the bound. A text reply (a page, a document: one
 * long string) has a few, and this is all the bound costs it: on Node 20, one core, 3-5 us per
 * 100 KB of escaped prose and 48-90 us per MB, against 53-99 us and 500-740 us for the scan of
 * {@link nestsDeeperThan} (which stops at every escaped quote). Text with more brackets (code,
 * many objects) usually reaches the bound within its first kilobytes and takes the scan.
 */
function holdsFewOpenings(text: string, maxDepth: number): boolean {
  let n = 0
  for (let i = text.indexOf('['); i >= 0; i = text.indexOf('[', i + 1)) if (++n > maxDepth) return false
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) if (++n > maxDepth) return false
  return true
}

/**
 * True when `text` nests arrays and objects deeper than `maxDepth`. A text of at most `maxDepth`
 * opening brackets is cleared by counting them ({@link holdsFewOpenings}); any other takes one
 * linear pass over the characters, no recursion, no allocation (strings are skipped with
 * `indexOf`), stopping at the first level past the bound. Meant to run before `JSON.parse` and
 * {@link scanJsonText}.
 *
 * Why before any parse: `JSON.parse` of 200,000 nested brackets took 133 ms here and the scan
 * 1.4 s once optimised (2.4-3.2 s at 500,000 levels), and the event loop serves no one meanwhile;
 * a body of `[` x 750,000 under the 4 MiB limit froze the edge for seconds (docs/reliability.md). With the
 * bound, such a body is refused after reading `maxDepth + 1` characters.
 * Brackets inside strings do not count. Text that is not JSON gives an unspecified answer; the
 * parse that follows rejects it anyway.
 * @param text JSON text (a request body or an origin's reply)
 * @param maxDepth the deepest nesting allowed (1 = a flat object or array)
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  if (holdsFewOpenings(text, maxDepth)) return false
  const n = text.length
  let depth = 0
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // Skip the string: its end is the next quote not preceded by an odd run of backslashes.
      let j = text.indexOf('"', i + 1)
      for (;;) {
        if (j < 0) return false
        let k = j - 1
        while (text.charCodeAt(k) === 0x5c) k--
        if ((j - 1 - k) % 2 === 0) break
        j = text.indexOf('"', j + 1)
      }
      i = j
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

/**
 * `JSON.parse` of text from an origin that no grading pass has bounded yet (an SSE event of a
 * GET stream, say): undefined when the text nests deeper than `maxDepth` ({@link nestsDeeperThan},
 * one linear pass, so 500,000 nested brackets cost a scan and not a 290 ms parse) or is not JSON.
 * @param text the JSON text
 * @param maxDepth the deepest nesting parsed (default {@link DEFAULT_MAX_JSON_DEPTH})
 */
export function parseWithinDepth(text: string, maxDepth = DEFAULT_MAX_JSON_DEPTH): unknown {
  if (nestsDeeperThan(text, maxDepth)) return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/**
 * One message position of a request body, as {@link scanRequestText} finds it: a top-level value
 * or, for an array body, one element of it.
 */
export interface RequestElement extends Span {
  /** Member names (colons outside strings) at every depth inside the element. */
  names: number
  /** Span of the message object's last `id` member value (the one `JSON.parse` keeps); -1 when none. */
  idStart: number
  idEnd: number
  /** Set by {@link countMembers} after the parse: some object in the element repeats a member name. */
  duplicateNames: boolean
}

/** Result of {@link scanRequestText}: null when the text nests deeper than the bound. */
export interface RequestScan {
  /** True when the first value is an array (a JSON-RPC batch). */
  isArray: boolean
  elements: RequestElement[]
}

/**
 * The request body's one pass before `JSON.parse`: the nesting bound of {@link nestsDeeperThan}
 * (same verdict), and what the edge needs that `JSON.parse` throws away, at a third of the cost of
 * {@link scanJsonText} plus the bound (a batch of 100 tools/call, 29 KB: 60 us, and 6 us for
 * {@link countMembers}, against 170-220 us; JSON.parse 125 us; one core):
 * - each message's span (a sub-batch is forwarded byte for byte), the span of its `id` value
 *   (ids past 2^53 echoed as sent);
 * - the number of member names inside each message, which is the number of colons outside
 *   strings. After the parse, {@link countMembers} counts the members `JSON.parse` kept: fewer
 *   means some object repeated a name (RFC 8259 §4; a validator seeing the last value while the
 *   origin reads the first is vector 61). A parsed object keeps one member per distinct name, so
 *   the counts agree exactly when no name repeats, at any depth.
 * Strings are skipped with `indexOf` (as in {@link nestsDeeperThan}); member names are read only
 * in the message object itself (to find `id`). On text that is not JSON the answer is unspecified
 * but the pass stays linear and never throws; the parse that follows refuses such text.
 * @param text the request body
 * @param maxDepth the deepest nesting allowed (`MAX_JSON_DEPTH`)
 * @returns null when `text` nests deeper than `maxDepth`, else the elements
 */
export function scanRequestText(text: string, maxDepth: number): RequestScan | null {
  const n = text.length
  let i = 0
  while (i < n && isWs(text.charCodeAt(i))) i++
  const isArray = text.charCodeAt(i) === 0x5b
  // Depth of the message values (0: the body itself, 1: inside a batch) and of their members.
  const msgDepth = isArray ? 1 : 0
  const memberDepth = msgDepth + 1
  const elements: RequestElement[] = []
  let depth = 0
  let colons = 0
  // The message being scanned: where it started (-1: none open), its colons before it began.
  let elStart = -1
  let elColons = 0
  let idStart = -1
  let idEnd = -1
  // In the message object: a member name comes next; the member being read is `id`, its value
  // starts at the next character that is not white space (-2) or at `valueAt`.
  let expectName = false
  let inId = false
  let valueAt = -1
  // Where the message or the id value ends (set by `,` `]` `}`, trimmed below); no closures, so
  // the loop's state stays in registers (with two, the scan took 45% longer).
  let closeAt = -1
  let idEndAt = -1
  for (; i < n; i++) {
    const c = text.charCodeAt(i)
    if (depth === memberDepth && (c === 0x7b || c === 0x5b)) {
      // A member's value that nests (most of the text): in its own loop, which keeps the
      // few values it needs in registers (inline here, the scan took twice as long).
      if (inId && valueAt === -2) valueAt = i
      const end = scanNested(text, i, maxDepth - depth)
      if (end === TOO_DEEP) return null
      if (end < 0) return { isArray, elements }
      colons += nestedColons
      i = end
      continue
    }
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue
    if (depth === msgDepth && elStart < 0 && c !== 0x2c && c !== 0x5d) {
      elStart = i
      elColons = colons
      idStart = idEnd = -1
      inId = expectName = false
    }
    if (inId && valueAt === -2) valueAt = i
    if (c === 0x22) {
      const j = stringEnd(text, i)
      if (j < 0) return { isArray, elements }
      if (expectName && depth === memberDepth) {
        expectName = false
        inId = isIdName(text, i + 1, j)
        valueAt = -1
      }
      i = j
    } else if (c === 0x3a) {
      colons++
      if (inId && valueAt === -1 && depth === memberDepth) valueAt = -2
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return null
      if (depth === memberDepth) expectName = c === 0x7b
    } else if (c === 0x7d || c === 0x5d) {
      if (depth === memberDepth && inId && valueAt >= 0) idEndAt = i
      depth--
      if (depth === msgDepth && !isArray && elStart >= 0) closeAt = i + 1
      else if (depth === 0 && isArray && elStart >= 0) closeAt = i
      if (depth < msgDepth) expectName = false
    } else if (c === 0x2c) {
      if (depth === memberDepth) {
        if (inId && valueAt >= 0) idEndAt = i
        expectName = true
      } else if (depth === msgDepth && isArray && elStart >= 0) closeAt = i
    }
    if (idEndAt >= 0) {
      while (idEndAt > valueAt && isWs(text.charCodeAt(idEndAt - 1))) idEndAt--
      idStart = valueAt
      idEnd = idEndAt
      inId = false
      idEndAt = -1
    }
    if (closeAt >= 0) {
      while (closeAt > elStart && isWs(text.charCodeAt(closeAt - 1))) closeAt--
      elements.push({ start: elStart, end: closeAt, names: colons - elColons, idStart, idEnd, duplicateNames: false })
      elStart = closeAt = -1
    }
  }
  // A single scalar body (a number or literal runs to the end of the text).
  if (elStart >= 0 && !isArray) {
    let end = n
    while (end > elStart && isWs(text.charCodeAt(end - 1))) end--
    elements.push({ start: elStart, end, names: colons - elColons, idStart, idEnd, duplicateNames: false })
  }
  return { isArray, elements }
}

/** {@link scanNested}: the value nests deeper than allowed. */
const TOO_DEEP = -2
/** Colons (member names) inside the value the last {@link scanNested} call walked. */
let nestedColons = 0

/**
 * Walks the array or object opened at `text[i]` to its closing bracket, counting member names
 * into {@link nestedColons}.
 * @param levels how deep the value may nest (1: no container inside it)
 * @returns the index of the closing bracket; {@link TOO_DEEP}; -1 when the text ends first
 */
function scanNested(text: string, i: number, levels: number): number {
  const n = text.length
  let depth = 1
  let colons = 0
  if (levels < 1) return TOO_DEEP
  for (i++; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      i = stringEnd(text, i)
      if (i < 0) return -1
    } else if (c === 0x3a) colons++
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > levels) return TOO_DEEP
    } else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) {
        nestedColons = colons
        return i
      }
    }
  }
  return -1
}

/** Index of the quote that ends the string opened at `text[i]` (the next one not after an odd run of backslashes), or -1. */
function stringEnd(text: string, i: number): number {
  let j = text.indexOf('"', i + 1)
  while (j >= 0) {
    let k = j - 1
    while (text.charCodeAt(k) === 0x5c) k--
    if ((j - 1 - k) % 2 === 0) return j
    j = text.indexOf('"', j + 1)
  }
  return -1
}

/** True when the name text `text[s, e)` (a JSON string body) decodes to `id`. */
function isIdName(text: string, s: number, e: number): boolean {
  if (e - s === 2) return text.charCodeAt(s) === 0x69 && text.charCodeAt(s + 1) === 0x64
  // An escaped form (`"\u0069d"`) is the same name; no escaped form of it is longer than 12.
  const first = text.charCodeAt(s)
  if (e - s > 12 || (first !== 0x69 && first !== 0x5c)) return false
  let escaped = false
  for (let k = s; k < e; k++) if (text.charCodeAt(k) === 0x5c) escaped = true
  if (!escaped) return false
  try {
    return JSON.parse(text.slice(s - 1, e + 1)) === 'id'
  } catch {
    return false
  }
}

/**
 * Members of every object inside a parsed JSON value (arrays are walked, each object's members
 * counted, as `JSON.parse` made them). Compared with {@link RequestElement.names}: fewer means a
 * repeated member name. `for...in` without a call per primitive: 6 us for a batch of 100
 * tools/call against 15 with `Object.values` and a call per value (one core). It would also count
 * an enumerable member added to Object.prototype, which can only make the counts differ: the
 * message is then refused as holding a repeated name, never passed. Recursion depth is the
 * value's nesting, which the scan bounded before the parse.
 * @param value an object or array returned by `JSON.parse` (anything else counts 0)
 */
export function countMembers(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  let n = 0
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const x: unknown = value[i]
      if (typeof x === 'object' && x !== null) n += countMembers(x)
    }
    return n
  }
  const o = value as Record<string, unknown>
  for (const k in o) {
    n++
    const x = o[k]
    if (typeof x === 'object' && x !== null) n += countMembers(x)
  }
  return n
}

/** Objects with more member names than this switch from a list to a Set for the duplicate check. */
const SMALL_OBJECT = 12

/**
 * Scans JSON text that `JSON.parse` accepted. Offsets refer to `text`.
 *
 * One pass, no closures, per-depth state in arrays reused across the scan: this runs on every
 * POST and every JSON reply (about 1 us for a 300-byte call; the first version, with a Set and a
 * frame object per JSON object, was 2.7 us, docs/performance.md). Duplicate names are found with a short list
 * per object, switching to a Set past {@link SMALL_OBJECT} names so a hostile object with many
 * members stays linear.
 * @param text valid JSON text
 * @returns the top-level elements with member spans and duplicate-name flags
 */
export function scanJsonText(text: string): JsonScan {
  const n = text.length
  let i = 0
  while (i < n && isWs(text.charCodeAt(i))) i++
  const isArray = text.charCodeAt(i) === 0x5b
  const elements: ScannedElement[] = []
  // The depth at which message elements start: 0 for a single value, 1 inside a batch.
  const msgDepth = isArray ? 1 : 0
  // Per open container, indexed by depth (0 = outermost): object or array, waiting for a name,
  // the name whose value comes next, where the current child value started, names seen.
  const isObj: boolean[] = []
  const expectKey: boolean[] = []
  const pendingKey: string[] = []
  const childStart: number[] = []
  const names: string[][] = []
  const nameSets: (Set<string> | null)[] = []
  let depth = 0
  // The element whose subtree we are in (for duplicate-name flags and member spans).
  let current: ScannedElement | null = null

  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x3a) {
      i++
      continue
    }
    const top = depth - 1
    if (c === 0x2c || c === 0x7d || c === 0x5d) {
      // End of the current child value of the container at `top`.
      if (top >= 0 && childStart[top]! >= 0) {
        let end = i
        while (end > 0 && isWs(text.charCodeAt(end - 1))) end--
        if (top === msgDepth && isObj[top] && current?.members) current.members.set(pendingKey[top]!, { start: childStart[top]!, end })
        if (isArray && top === 0 && current) current.end = end
        childStart[top] = -1
      }
      i++
      if (c === 0x2c) {
        if (top >= 0 && isObj[top]) expectKey[top] = true
      } else {
        depth--
        if (depth === 0 && !isArray && current) current.end = i
      }
      continue
    }
    // A value starts here, or (in an object waiting for one) a member name.
    if (c === 0x22 && top >= 0 && expectKey[top]) {
      const s = i + 1
      let escaped = false
      // A character loop, not `indexOf('"')`: with an indexOf in this loop, V8's optimised code
      // took 1.6 s for 340,000 `1,` in an array (quadratic; 19 ms when first run, before
      // optimisation); the loop keeps every run linear (about JSON.parse's own time).
      i = s
      while (i < n) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) {
          escaped = true
          i += 2
          continue
        }
        if (d === 0x22) break
        i++
      }
      const key = escaped ? (JSON.parse(text.slice(s - 1, i + 1)) as string) : text.slice(s, i)
      i++
      const set = nameSets[top]
      const list = names[top]!
      if (set ? set.has(key) : list.includes(key)) {
        if (current) current.duplicateNames = true
      } else if (set) set.add(key)
      else if (list.length < SMALL_OBJECT) list.push(key)
      else nameSets[top] = new Set([...list, key])
      pendingKey[top] = key
      expectKey[top] = false
      continue
    }
    // Value start: note it as the child of the enclosing container, or as a new element.
    if (top >= 0 && childStart[top]! < 0) childStart[top] = i
    if (depth === msgDepth) {
      current = { start: i, end: isArray ? i : n, members: null, duplicateNames: false }
      elements.push(current)
    }
    if (c === 0x7b || c === 0x5b) {
      const obj = c === 0x7b
      if (obj && depth === msgDepth && current) current.members = new Map()
      isObj[depth] = obj
      expectKey[depth] = obj
      pendingKey[depth] = ''
      childStart[depth] = -1
      if (obj) {
        const list = names[depth]
        if (list) list.length = 0
        else names[depth] = []
        nameSets[depth] = null
      }
      depth++
      i++
      continue
    }
    if (c === 0x22) {
      // a string value (a character loop, as for names)
      i++
      while (i < n) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) {
          i += 2
          continue
        }
        if (d === 0x22) break
        i++
      }
      i++
    } else {
      // number or literal
      while (i < n) {
        const d = text.charCodeAt(i)
        if (isWs(d) || d === 0x2c || d === 0x7d || d === 0x5d) break
        i++
      }
    }
    if (depth === 0 && current) current.end = i
  }
  return { isArray, elements }
}

/** The text of a member's value inside a scanned element, or undefined. */
export function memberText(text: string, el: ScannedElement | undefined, name: string): string | undefined {
  const span = el?.members?.get(name)
  return span ? text.slice(span.start, span.end) : undefined
}
