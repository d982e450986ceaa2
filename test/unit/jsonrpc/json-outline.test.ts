/**
 * outlineJson (the reply-side pass before `JSON.parse`): the nesting bound and the span of each
 * top-level value, checked against generated JSON with white space, escapes (backslash runs
 * across the short-string window) and brackets inside strings, and against the request-side
 * scan and bound (json-scan.ts) on the same texts.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { outlineJson } from '../../../src/core/jsonrpc/json-outline'
import { nestsDeeperThan, scanJsonText } from '../../../src/core/jsonrpc/json-scan'

const ws = fc.constantFrom('', ' ', '\n  ', '\t', '\r\n')
/** String bodies around the 24-character window: escaped quotes and backslash runs at every offset. */
const stringBody = fc
  .array(fc.constantFrom('a', 'é', '\\"', '\\\\', '\\n', '[', '{', ']', '}', ',', '\\u0022', '😀', 'x'.repeat(20)), { maxLength: 12 })
  .map((parts) => parts.join(''))
const value: fc.Arbitrary<string> = fc.letrec<{ v: string; o: string; a: string }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('0', '-2.5e3', 'true', 'false', 'null', '12345678901234567890'),
    stringBody.map((s) => `"${s}"`),
    tie('o'),
    tie('a')
  ),
  o: fc.tuple(ws, fc.array(fc.tuple(stringBody, ws, tie('v')), { maxLength: 6 })).map(([w, m]) => `{${w}${m.map(([n, w2, v]) => `"${n}"${w2}:${w2}${v}`).join(`${w},`)}${w}}`),
  a: fc.tuple(ws, fc.array(tie('v'), { maxLength: 4 })).map(([w, items]) => `[${w}${items.join(`${w},${w}`)}${w}]`),
})).v

describe('outlineJson', () => {
  it('a single value: its span without the white space around it, and the same bound as nestsDeeperThan', () => {
    fc.assert(
      fc.property(value, ws, fc.integer({ min: 1, max: 6 }), (v, w, max) => {
        const text = w + v + w
        JSON.parse(text)
        const o = outlineJson(text, max)
        expect(o.tooDeep).toBe(nestsDeeperThan(text, max))
        if (o.tooDeep) return
        if (v.startsWith('[')) {
          const items = JSON.parse(v) as unknown[]
          expect(o.isArray).toBe(true)
          expect(o.elements.map((e) => JSON.parse(text.slice(e.start, e.end)))).toEqual(items)
          expect(o.elements).toEqual(scanJsonText(text).elements.map((e) => ({ start: e.start, end: e.end })))
        } else {
          expect(o.isArray).toBe(false)
          expect(o.elements.map((e) => text.slice(e.start, e.end))).toEqual([v])
        }
      }),
      { numRuns: 1000 }
    )
  })

  it('a batch: one span per element, each exactly its text', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 5 }), ws, (items, w) => {
        const text = `${w}[${w}${items.join(`${w},${w}`)}${w}]${w}`
        const o = outlineJson(text, 64)
        expect(o.isArray).toBe(true)
        expect(o.elements.map((e) => text.slice(e.start, e.end))).toEqual(items)
      }),
      { numRuns: 500 }
    )
  })

  it('stops at the first level past the bound: 750,000 brackets cost the bound, not the text', () => {
    const deep = '['.repeat(750_000) + ']'.repeat(750_000)
    expect(outlineJson(deep, 64)).toEqual({ tooDeep: true, isArray: true, elements: [] })
    expect(outlineJson('{"a":' + '['.repeat(64) + ']'.repeat(64) + '}', 64).tooDeep).toBe(true)
    expect(outlineJson('{"a":' + '['.repeat(63) + ']'.repeat(63) + '}', 64).tooDeep).toBe(false)
  })

  it('brackets inside strings do not count, even after a long run of backslashes', () => {
    const s = `"${'\\\\'.repeat(30)}\\"[[[[["`
    expect(outlineJson(`[${s},1]`, 1)).toEqual({
      tooDeep: false,
      isArray: true,
      elements: [
        { start: 1, end: 1 + s.length },
        { start: 2 + s.length, end: 3 + s.length },
      ],
    })
  })
})
