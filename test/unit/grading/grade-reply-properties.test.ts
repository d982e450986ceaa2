/**
 * Properties of the D11 rewrite (pure core, fast-check): whatever the origin's result holds,
 * marking it `isError: true` changes nothing else, byte for byte, and a flagged result always
 * parses back to the same value plus the flag. A JSON text item, read from its members' spans
 * instead of a parse, is flagged exactly when the same object as `structuredContent` is (generated
 * text: flag members, error reports, repeated and escaped names, white space).
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { hidesFailure, markIsError } from '../../../src/core/grading/grade-reply'
import { jsonWs, memberLists, writeJson } from '../../helpers/json-text'

const json = fc.jsonValue({ maxDepth: 3 })

describe('markIsError', () => {
  it('adds only "isError":true to the result and keeps every other byte', () => {
    fc.assert(
      fc.property(fc.string(), json, fc.boolean(), fc.oneof(fc.integer(), fc.string()), (text, structured, hadFlag, id) => {
        const result: Record<string, unknown> = { content: [{ type: 'text', text }], structuredContent: structured }
        if (hadFlag) result.isError = false
        const source = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`
        const out = markIsError(source)
        const parsed = JSON.parse(source) as { result: Record<string, unknown> }
        expect(JSON.parse(out)).toEqual({ ...parsed, result: { ...parsed.result, isError: true } })
        // Only the flag changed: removing it gives the source back (minus a replaced `false`).
        const back = hadFlag ? out.replace('"isError":true', '"isError":false') : out.replace(',"isError":true}}', '}}')
        expect(back).toBe(source)
      }),
      { numRuns: 300 }
    )
  })

  it('never flags plain text, arrays or JSON without a failure member', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.array(json).map((a) => JSON.stringify(a)),
          fc
            .dictionary(
              fc.string().filter((k) => !['success', 'ok', 'status', 'data', 'result', 'error'].includes(k)),
              json
            )
            .map((o) => JSON.stringify(o))
        ),
        (text) => {
          expect(hidesFailure({ content: [{ type: 'text', text }] })).toBe(false)
        }
      ),
      { numRuns: 300 }
    )
  })

  it('never flags an error text beside a member that may be a result', () => {
    const companions = [
      'tip',
      'hint',
      'message',
      'details',
      'detail',
      'code',
      'errorCode',
      'error_code',
      'reason',
      'suggestion',
      'help',
      'documentation',
      'valid',
      'status',
      'statusCode',
    ]
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((s) => s.trim() !== ''),
        fc.string().filter((k) => !['success', 'ok', 'data', 'result', 'error', ...companions].includes(k)),
        json,
        (error, key, value) => {
          const text = JSON.stringify({ error, [key]: value })
          expect(hidesFailure({ content: [{ type: 'text', text }] })).toBe(false)
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe('hidesFailure on a JSON text item', () => {
  const names = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('success', 'ok', 'status', 'error', 'data', 'result', 'message', 'tip', 'valid', 'statusCode', 'code') },
    { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }
  )
  const leaves = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<unknown>(false, true, 'error', 'failed', 'ok', '', ' ', 'boom', 404, 500, 200, null, { message: 'm' }, { message: ' ' }, [false]) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }
  )
  it('flags a text exactly when the parsed object as structuredContent is flagged', () => {
    fc.assert(
      fc.property(memberLists(names, leaves), jsonWs, fc.nat(), (list, w, mask) => {
        const text = writeJson(list, w, mask)
        const parsed = JSON.parse(text) as unknown
        expect(hidesFailure({ content: [{ type: 'text', text }] })).toBe(hidesFailure({ structuredContent: parsed }))
      }),
      { numRuns: 3000 }
    )
  })

  it('reads nothing nested deeper than the bound as JSON, however the failure is flagged', () => {
    const deep = (levels: number) => `{"success":false,"x":${'['.repeat(levels)}${']'.repeat(levels)}}`
    expect(hidesFailure({ content: [{ type: 'text', text: deep(63) }] })).toBe(true)
    expect(hidesFailure({ content: [{ type: 'text', text: deep(64) }] })).toBe(false)
    expect(hidesFailure({ content: [{ type: 'text', text: deep(64) }] }, 65)).toBe(true)
    // 500,000 levels: one linear pass, not the parse that took 290 ms.
    expect(hidesFailure({ content: [{ type: 'text', text: deep(500_000) }] })).toBe(false)
  })

  it('confirms a text that only looks like a failure with the parse: broken JSON is prose', () => {
    expect(hidesFailure({ content: [{ type: 'text', text: '{"success":false,}' }] })).toBe(false)
    expect(hidesFailure({ content: [{ type: 'text', text: '{"success":false, "a": [}' }] })).toBe(false)
    expect(hidesFailure({ content: [{ type: 'text', text: '{"succ\\u0065ss":false}' }] })).toBe(true)
  })
})
