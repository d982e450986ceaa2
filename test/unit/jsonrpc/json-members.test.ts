/**
 * The member read of a JSON object text without a parse (src/core/jsonrpc/json-members.ts), checked
 * against `JSON.parse` on generated text (fast-check): objects written with random white space,
 * repeated member names and escaped names; every member span parses back to the value `JSON.parse`
 * keeps for that name, the members of a `nested` member's object likewise, and the deepest nesting
 * is the text's. Text that is not JSON never throws.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { objectMembers, spanText } from '../../../src/core/jsonrpc/json-members'
import { jsonWs, memberLists, writeJson } from '../../helpers/json-text'

const name = fc.oneof(fc.constantFrom('data', 'result', 'success', 'ok', 'status', 'error', '__proto__', 'a"b', 'x\\y', ''), fc.string({ maxLength: 8 }))
const object = memberLists(name, fc.jsonValue({ maxDepth: 3 }))

describe('objectMembers', () => {
  it('finds every member JSON.parse keeps, with the span of the value it keeps', () => {
    fc.assert(
      fc.property(object, jsonWs, fc.nat(), (tree, w, mask) => {
        const text = writeJson(tree, w, mask)
        const parsed = JSON.parse(text) as Record<string, unknown>
        const read = objectMembers(text, new Set(['data', 'result']))
        expect(read).not.toBeNull()
        expect([...read!.members.keys()].sort()).toEqual(Object.keys(parsed).sort())
        for (const [k, span] of read!.members) expect(JSON.parse(spanText(text, span)!)).toEqual(parsed[k])
        for (const k of ['data', 'result']) {
          const v = Object.hasOwn(parsed, k) ? parsed[k] : undefined
          const inner = read!.nested.get(k)
          if (v === null || typeof v !== 'object' || Array.isArray(v)) expect(inner).toBeUndefined()
          else {
            expect([...inner!.keys()].sort()).toEqual(Object.keys(v).sort())
            for (const [m, span] of inner!) expect(JSON.parse(spanText(text, span)!)).toEqual((v as Record<string, unknown>)[m])
          }
        }
      }),
      { numRuns: 500 }
    )
  })

  it('reports the deepest nesting, brackets in strings not counted', () => {
    expect(objectMembers('{}')!.deepest).toBe(1)
    expect(objectMembers('{"a":[{"b":"[[[["}]}')!.deepest).toBe(3)
    expect(objectMembers(`{"a":${'['.repeat(100)}${']'.repeat(100)}}`)!.deepest).toBe(101)
  })

  it('keeps the last of repeated names, and a nested object only while it is the last value', () => {
    const t = '{"data":{"success":false},"data":[1],"ok":1,"ok":false}'
    const read = objectMembers(t, new Set(['data']))!
    expect(spanText(t, read.members.get('data'))).toBe('[1]')
    expect(read.nested.has('data')).toBe(false)
    expect(spanText(t, read.members.get('ok'))).toBe('false')
  })

  it('reads only the object that is the value itself, not one inside an array', () => {
    const t = '{"data":[{"success":false}]}'
    expect(objectMembers(t, new Set(['data']))!.nested.size).toBe(0)
  })

  it('answers null for text that is not an object, and never throws on broken text', () => {
    expect(objectMembers('[1]')).toBeNull()
    expect(objectMembers('"{"')).toBeNull()
    expect(objectMembers('{"a": "never closed}')).toBeNull()
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', ':', ',', ' ', 'a', '1') }), (s) => {
        objectMembers('{' + s, new Set(['data', 'result']))
      }),
      { numRuns: 2000 }
    )
  })
})
