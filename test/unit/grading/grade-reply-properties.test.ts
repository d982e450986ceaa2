/**
 * Properties of the D11 rewrite (pure core, fast-check): whatever the origin's result holds,
 * marking it `isError: true` changes nothing else, byte for byte, and a flagged result always
 * parses back to the same value plus the flag.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { hidesFailure, markIsError } from '../../../src/core/grading/grade-reply'

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
