/**
 * The JSON scan of request bodies and origin replies (src/core/jsonrpc/json-scan.ts):
 * - the nesting bound (`nestsDeeperThan`, `MAX_JSON_DEPTH`) and how parse-body applies it before
 *   any parse;
 * - the request body's pass before the parse (`scanRequestText`, through parseBody): the same
 *   nesting verdict, spans, id tokens and duplicate-name flags as the full scan, on generated text;
 * - the structural scan every JSON reply goes through, checked against what the
 *   generated text is known to hold (fast-check): element spans and message member spans parse
 *   back to the very values `JSON.parse` gives, and a repeated member name is found at any depth
 *   exactly when the generator put one there (the bypass of vector 61), including objects past
 *   the scan's small-object list and escaped names.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DEFAULT_MAX_JSON_DEPTH, memberText, nestsDeeperThan, parseWithinDepth, scanJsonText, scanRequestText } from '../../../src/core/jsonrpc/json-scan'
import { carriesListChanged } from '../../../src/core/forwarding/pass-through'
import { parseBody } from '../../../src/core/request/parse-body'

const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth)

describe('nestsDeeperThan', () => {
  it('counts arrays and objects alike, and the bound is inclusive', () => {
    expect(nestsDeeperThan(nested(64), 64)).toBe(false)
    expect(nestsDeeperThan(nested(65), 64)).toBe(true)
    expect(nestsDeeperThan('{"a":{"b":[{}]}}', 4)).toBe(false)
    expect(nestsDeeperThan('{"a":{"b":[{}]}}', 3)).toBe(true)
    expect(nestsDeeperThan('1', 0)).toBe(false)
    expect(nestsDeeperThan('[]', 0)).toBe(true)
  })

  it('measures depth, not the number of brackets: siblings do not add up', () => {
    expect(nestsDeeperThan('[' + '[],'.repeat(10_000) + '[]]', 2)).toBe(false)
  })

  it('skips brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(JSON.stringify({ s: '[[[[[[[[[[' }), 1)).toBe(false)
    expect(nestsDeeperThan('["a\\"[[[[", "b"]', 1)).toBe(false)
    // An even run of backslashes does not escape the quote: the string ends there.
    expect(nestsDeeperThan('["a\\\\", [[]]]', 2)).toBe(true)
    expect(nestsDeeperThan('["a\\\\", [[]]]', 3)).toBe(false)
  })

  it('stops at the first level past the bound (750,000 brackets refused in well under a second)', () => {
    const text = '['.repeat(750_000)
    const t0 = performance.now()
    expect(nestsDeeperThan(text, DEFAULT_MAX_JSON_DEPTH)).toBe(true)
    expect(performance.now() - t0).toBeLessThan(500)
  })

  it('an unterminated string is not deeper (the parse that follows refuses it)', () => {
    expect(nestsDeeperThan('["[[[[[[', 1)).toBe(false)
  })

  it('a text of few brackets is cleared without the scan, one of many brackets in strings still gets the scan', () => {
    // 3 brackets, bound 3: cleared by the count alone; bound 2: the scan finds depth 3.
    expect(nestsDeeperThan('{"a":[{"b":"' + 'x'.repeat(100_000) + '"}]}', 3)).toBe(false)
    expect(nestsDeeperThan('{"a":[{"b":"' + 'x'.repeat(100_000) + '"}]}', 2)).toBe(true)
    // More brackets than the bound, all but one in a string: the scan decides, and it is not deeper.
    expect(nestsDeeperThan(JSON.stringify({ s: '['.repeat(100) + '{'.repeat(100) }), 1)).toBe(false)
    expect(nestsDeeperThan(JSON.stringify([{ s: '{'.repeat(100) }]), 1)).toBe(true)
  })

  it('agrees with a character-by-character depth on generated text, brackets in strings and escapes included', () => {
    fc.assert(
      fc.property(gen, fc.integer({ min: 0, max: 8 }), (g, max) => {
        expect(nestsDeeperThan(g.text, max)).toBe(textDepth(g.text) > max)
      }),
      { numRuns: 3000 }
    )
  })
})

/** The nesting depth of JSON text, read character by character: the reference for the bound. */
function textDepth(text: string): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth)
    else if (c === ']' || c === '}') depth--
  }
  return deepest
}

describe('parseBody', () => {
  it('refuses a body nested past the bound with -32700 and a fixed phrase, before JSON.parse', () => {
    const r = parseBody(nested(65), 64)
    expect(r).toEqual({ kind: 'body', code: -32700, message: 'Parse error: the body nests arrays and objects deeper than 64 levels' })
    expect(parseBody(nested(64), 64).kind).toBe('batch')
    expect(parseBody('{"a":'.repeat(63) + '{}' + '}'.repeat(63), 64).kind).toBe('single')
    expect(parseBody('{"a":'.repeat(64) + '{}' + '}'.repeat(64), 64).kind).toBe('body')
  })

  it('refuses bytes that are not UTF-8 or not JSON, and an empty batch, without quoting the body', () => {
    expect(parseBody(new Uint8Array([0x7b, 0xff, 0x7d]))).toEqual({ kind: 'body', code: -32700, message: 'Parse error: the body could not be read as UTF-8 text' })
    const secret = '{"token":"sk-live-123",'
    const r = parseBody(secret)
    expect(r).toEqual({ kind: 'body', code: -32700, message: 'Parse error: the body could not be read as JSON' })
    expect(JSON.stringify(r)).not.toContain('sk-live')
    expect(parseBody('[]')).toEqual({ kind: 'body', code: -32600, message: 'Invalid Request: an empty batch' })
  })

  it('keeps each batch element with its exact span', () => {
    const text = '[ {"id":1} ,{"id":"1"}]'
    const r = parseBody(text)
    if (r.kind !== 'batch') throw new Error(r.kind)
    expect(r.items.map((it) => text.slice(it.el.start, it.el.end))).toEqual(['{"id":1}', '{"id":"1"}'])
  })
})

describe('scanJsonText', () => {
  it('flags a duplicate member name at any depth, and gives member spans of the top object', () => {
    const text = '{"id":12345678901234567890,"params":{"a":{"x":1,"x":2}}}'
    const el = scanJsonText(text).elements[0]!
    expect(el.duplicateNames).toBe(true)
    const id = el.members!.get('id')!
    expect(text.slice(id.start, id.end)).toBe('12345678901234567890')
  })
})

/** Generated JSON text and whether some object in it repeats a member name. */
interface Gen {
  text: string
  dup: boolean
}

const ws = fc.constantFrom('', ' ', '\n  ', '\t')
/** Names as JSON string bodies: `a\u0062` and `ab` are the same name, as are `x\"` forms. */
const nameToken = fc.constantFrom('id', 'a', 'ab', 'a\\u0062', 'q\\"', 'é', '__proto__', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9', 'k10', 'k11', 'k12', 'k13', 'k14')
const decoded = (token: string): string => JSON.parse(`"${token}"`) as string

const gen: fc.Arbitrary<Gen> = fc.letrec<{ v: Gen; o: Gen; a: Gen }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('0', '-2.5e3', 'true', 'null', '"s"', '"\\\\"', '12345678901234567890', '"}],{["').map((text) => ({ text, dup: false })),
    tie('o'),
    tie('a')
  ),
  o: fc.tuple(ws, fc.array(fc.tuple(nameToken, ws, tie('v')), { maxLength: 20 })).map(([w, members]) => {
    const names = members.map(([n]) => decoded(n))
    const dup = new Set(names).size !== names.length || members.some(([, , v]) => v.dup)
    return { text: `{${w}${members.map(([n, w2, v]) => `"${n}"${w2}:${w2}${v.text}`).join(`${w},`)}${w}}`, dup }
  }),
  a: fc.tuple(ws, fc.array(tie('v'), { maxLength: 4 })).map(([w, items]) => ({ text: `[${w}${items.map((v) => v.text).join(`${w},${w}`)}${w}]`, dup: items.some((v) => v.dup) })),
})).o

describe('scanJsonText', () => {
  it('a single message: its span, its members and duplicate names at any depth', () => {
    fc.assert(
      fc.property(gen, ws, (g, w) => {
        const text = w + g.text + w
        const scan = scanJsonText(text)
        expect(scan.isArray).toBe(false)
        expect(scan.elements).toHaveLength(1)
        const el = scan.elements[0]!
        expect(text.slice(el.start, el.end)).toBe(g.text)
        expect(el.duplicateNames).toBe(g.dup)
        const value = JSON.parse(text) as Record<string, unknown>
        // Each member span holds the value JSON.parse kept for that name (the last one).
        for (const [name, span] of el.members!) expect(JSON.parse(text.slice(span.start, span.end))).toEqual(value[name])
        expect(new Set(el.members!.keys())).toEqual(new Set(Object.keys(value)))
      }),
      { numRuns: 1500 }
    )
  })

  it('a batch: one element per array entry, each with its own span and duplicate flag', () => {
    fc.assert(
      fc.property(fc.array(gen, { minLength: 1, maxLength: 5 }), ws, (items, w) => {
        const text = `${w}[${w}${items.map((g) => g.text).join(`${w},${w}`)}${w}]${w}`
        const scan = scanJsonText(text)
        expect(scan.isArray).toBe(true)
        expect(scan.elements.map((e) => text.slice(e.start, e.end))).toEqual(items.map((g) => g.text))
        expect(scan.elements.map((e) => e.duplicateNames)).toEqual(items.map((g) => g.dup))
      }),
      { numRuns: 500 }
    )
  })

  it('a repeated name deep inside an object of many members is found, and one only in different objects is not', () => {
    const many = Array.from({ length: 40 }, (_, i) => `"m${i}":${i}`).join(',')
    expect(scanJsonText(`{"params":{"arguments":{${many},"m3":0}}}`).elements[0]!.duplicateNames).toBe(true)
    expect(scanJsonText(`{"params":{"arguments":{${many}}},"m3":{"m3":1}}`).elements[0]!.duplicateNames).toBe(false)
    expect(scanJsonText(`{"a":1,"\\u0061":2}`).elements[0]!.duplicateNames).toBe(true)
  })

  it('scalars at the top level', () => {
    expect(scanJsonText(' 12345678901234567890 ').elements[0]).toMatchObject({ start: 1, end: 21, members: null })
    expect(scanJsonText('[1, "x" ,{"id":7}]').elements.map((e) => [e.start, e.end])).toEqual([
      [1, 2],
      [4, 7],
      [9, 17],
    ])
  })
})

/** The body's items as parseBody gives them: span text, id token, duplicate flag. */
function parsedItems(text: string) {
  const r = parseBody(text)
  if (r.kind === 'body') throw new Error(r.message)
  return (r.kind === 'batch' ? r.items : [r.item]).map((it) => ({
    text: text.slice(it.el.start, it.el.end),
    id: it.el.idStart >= 0 ? text.slice(it.el.idStart, it.el.idEnd) : undefined,
    dup: it.el.duplicateNames,
  }))
}

describe('parseBody: the request scan before the parse (scanRequestText)', () => {
  it('a single message: its span, its id token and duplicate names at any depth, as the full scan finds them', () => {
    fc.assert(
      fc.property(gen, ws, (g, w) => {
        const text = w + g.text + w
        const full = scanJsonText(text).elements[0]!
        expect(parsedItems(text)).toEqual([{ text: g.text, id: memberText(text, full, 'id'), dup: g.dup }])
      }),
      { numRuns: 1500 }
    )
  })

  it('a batch: one item per array entry, each with its own span, id token and duplicate flag', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            gen,
            fc.constantFrom('7', '"x"', 'null', '[]', '[{"id":1,"id":2}]').map((text) => ({ text, dup: text.includes('"id":2') }))
          ),
          { minLength: 1, maxLength: 5 }
        ),
        ws,
        (items, w) => {
          const text = `${w}[${w}${items.map((g) => g.text).join(`${w},${w}`)}${w}]${w}`
          const full = scanJsonText(text).elements
          expect(parsedItems(text)).toEqual(items.map((g, i) => ({ text: g.text, id: memberText(text, full[i], 'id'), dup: g.dup })))
        }
      ),
      { numRuns: 500 }
    )
  })

  it('the id token as sent: past 2^53, escaped names, the last of two ids, not a nested id', () => {
    expect(parsedItems('{"jsonrpc":"2.0","id" : 12345678901234567890 ,"method":"ping"}')[0]!.id).toBe('12345678901234567890')
    expect(parsedItems('{"\u0069d":"\u0041","method":"ping"}')[0]!.id).toBe('"\u0041"')
    expect(parsedItems('{"id":1,"id":2}')[0]).toEqual({ text: '{"id":1,"id":2}', id: '2', dup: true })
    expect(parsedItems('{"params":{"id":5},"x":[{"id":6}]}')[0]!.id).toBeUndefined()
    expect(parsedItems('[{"id":1},{"method":"x"}]').map((i) => i.id)).toEqual(['1', undefined])
  })

  it('a name repeated only in different objects is no duplicate; one deep inside many members is', () => {
    const many = Array.from({ length: 40 }, (_, i) => `"m${i}":${i}`).join(',')
    expect(parsedItems(`{"params":{"arguments":{${many},"m3":0}}}`)[0]!.dup).toBe(true)
    expect(parsedItems(`{"params":{"arguments":{${many}}},"m3":{"m3":1}}`)[0]!.dup).toBe(false)
    expect(parsedItems(`{"a":1,"\u0061":2}`)[0]!.dup).toBe(true)
    expect(parsedItems(`{"a":{"x":{"y":1}},"a":{"z":2}}`)[0]!.dup).toBe(true)
    expect(parsedItems(`{"__proto__":1,"__proto__":2}`)[0]!.dup).toBe(true)
    expect(parsedItems(`{"__proto__":{"a":1},"b":":"}`)[0]!.dup).toBe(false)
  })

  it('gives the nesting verdict of nestsDeeperThan, whatever the text', () => {
    const chunk = fc.constantFrom('[', ']', '{', '}', '"', '\\', '\\"', ':', ',', 'a', ' ', '"[{"')
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 40 }), fc.integer({ min: 0, max: 6 }), (parts, max) => {
        const text = parts.join('')
        expect(scanRequestText(text, max) === null).toBe(nestsDeeperThan(text, max))
      }),
      { numRuns: 3000 }
    )
  })

  it('scalars at the top level', () => {
    expect(parsedItems(' 12345678901234567890 ')[0]!.text).toBe('12345678901234567890')
    expect(parsedItems('[1, "x" ,{"id":7}]').map((i) => i.text)).toEqual(['1', '"x"', '{"id":7}'])
  })
})

describe('scanJsonText cost', () => {
  /** CPU time (process.cpuUsage) of `fn` run `runs` times, in ms. */
  const cpuMs = (fn: () => void, runs: number) => {
    const c0 = process.cpuUsage()
    for (let i = 0; i < runs; i++) fn()
    const c = process.cpuUsage(c0)
    return (c.user + c.system) / 1000
  }
  const ping = (items: string, n: number) =>
    new TextDecoder().decode(new TextEncoder().encode(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":[${Array(n).fill(items).join(',')}]}}`))
  // Every run, not only the first: V8's optimised code was quadratic on arrays of numbers (340,000 `1`: 19 ms on the first run, 1.6 s on each later one).
  for (const [name, text] of [
    ['340,000 small numbers', ping('1', 340_000)],
    ['80,000 numbers of 22 characters', ping('1.7976931348623157e308', 80_000)],
    ['170,000 strings', ping('"a"', 170_000)],
    ['20,000 escaped strings and names', ping('{"k\\n":"a\\"b"}', 20_000)],
  ] as const) {
    it(`stays linear, within a small multiple of JSON.parse of the same text, on every run: ${name}`, { timeout: 30_000 }, () => {
      const runs = 8
      const parse = cpuMs(() => JSON.parse(text), runs)
      const scan = cpuMs(() => scanJsonText(text), runs)
      const request = cpuMs(() => scanRequestText(text, DEFAULT_MAX_JSON_DEPTH), runs)
      console.log(
        `[json-scan] ${name}, ${text.length} characters, ${runs} runs: scan ${scan.toFixed(0)} ms CPU, request scan ${request.toFixed(0)} ms CPU, JSON.parse ${parse.toFixed(0)} ms CPU`
      )
      // Wide margin for a busy machine and V8's warm-up (the first runs are interpreted): the defect was 100x and more.
      expect(scan).toBeLessThan(10 * parse + 400)
      expect(request).toBeLessThan(10 * parse + 400)
    })
  }
})

describe('parseWithinDepth (origin text no grading pass has bounded)', () => {
  it('parses JSON within the bound, and answers undefined past it or for text that is not JSON', () => {
    expect(parseWithinDepth('{"a":[1]}')).toEqual({ a: [1] })
    expect(parseWithinDepth(nested(64))).toEqual(JSON.parse(nested(64)))
    expect(parseWithinDepth(nested(65))).toBeUndefined()
    expect(parseWithinDepth(nested(65), 65)).toEqual(JSON.parse(nested(65)))
    expect(parseWithinDepth('{"a":')).toBeUndefined()
  })

  it('keeps a GET stream event nested past the bound from being parsed for list_changed', () => {
    const shallow = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    expect(carriesListChanged(shallow)).toBe(true)
    // 500,000 levels behind the method name: a linear scan, not the 290 ms parse.
    const deep = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"x":${nested(500_000)}}}`
    expect(carriesListChanged(deep)).toBe(false)
  })
})
