/**
 * A large batch answer read in slices (src/core/grading/sliced-batch.ts): for the same bytes it
 * gives what the whole-text path gives (element texts trimmed, values as `JSON.parse` reads
 * them, `too_deep` at the nesting bound, `invalid` exactly when the whole text does not parse),
 * and it yields between slices. One row per case; a tiny slice makes every case cross slices.
 */
import { describe, expect, it } from 'vitest'
import { readBatchInSlices, resultValueStart, startsArray } from '../../../src/core/grading/sliced-batch'
import { WorkSlices } from '../../../src/core/work-slices'

const bytes = (s: string) => new TextEncoder().encode(s)
const list = '{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}'

describe('readBatchInSlices', () => {
  it.each([
    ['two elements, white space around', ' [ {"a":1} ,\n{"b":[2]} ] ', ['{"a":1}', '{"b":[2]}']],
    ['strings holding brackets and escaped quotes', '[{"s":"]["},{"t":"\\"]"}]', ['{"s":"]["}', '{"t":"\\"]"}']],
    [
      'one result repeated: equal values',
      `[{"jsonrpc":"2.0","id":1,"result":${list}},{"jsonrpc":"2.0","id":2,"result":${list}}]`,
      [`{"jsonrpc":"2.0","id":1,"result":${list}}`, `{"jsonrpc":"2.0","id":2,"result":${list}}`],
    ],
    ['an empty array', '[]', []],
  ])('%s: the texts and values of the whole-text path', async (_, text, texts) => {
    const budget = new WorkSlices(4)
    const out = await readBatchInSlices(bytes(text), 64, budget)
    expect(out).toEqual({ kind: 'batch', exact: true, texts, values: JSON.parse(text) })
    if (texts.length > 0) expect(budget.yields).toBeGreaterThan(0)
  })

  it.each([
    ['a trailing comma', '[{"a":1},]'],
    ['a leading comma', '[,{"a":1}]'],
    ['two commas', '[{"a":1},,{"b":2}]'],
    ['text after the array', '[{"a":1}] x'],
    ['not closed', '[{"a":1}'],
    ['an element that is not JSON', '[{"a":tru}]'],
    ['a closing brace for the array', '[{"a":1}}'],
  ])('%s: invalid, as JSON.parse of the whole text', async (_, text) => {
    expect(() => JSON.parse(text)).toThrow()
    expect(await readBatchInSlices(bytes(text), 64, new WorkSlices(4))).toEqual({ kind: 'invalid' })
  })

  it('nesting past MAX_JSON_DEPTH (the array is the first level): too_deep', async () => {
    expect(await readBatchInSlices(bytes('[{"a":{"b":1}}]'), 3, new WorkSlices())).toMatchObject({ kind: 'batch' })
    expect(await readBatchInSlices(bytes('[{"a":{"b":[1]}}]'), 3, new WorkSlices())).toEqual({ kind: 'too_deep' })
  })

  it('bytes that are not UTF-8 are read leniently and not relayed as they are', async () => {
    const b = new Uint8Array([...bytes('[{"s":"'), 0xff, ...bytes('"}]')])
    expect(await readBatchInSlices(b, 64, new WorkSlices())).toEqual({ kind: 'batch', exact: false, texts: ['{"s":"\uFFFD"}'], values: [{ s: '\uFFFD' }] })
  })
})

describe('startsArray and resultValueStart', () => {
  it.each([
    [' \n[1]', true],
    ['{"a":1}', false],
    ['\uFEFF[1]', false],
    ['', false],
  ])('startsArray(%j) is %j', (text, yes) => {
    expect(startsArray(bytes(text))).toBe(yes)
  })

  it.each([
    ['{"jsonrpc":"2.0","id":1,"result":{"a":1}}', '{"a":1}}'],
    ['{ "id" : "x,}" , "result" : []}', '[]}'],
    ['{"id":"a\\"b","result":2}', '2}'],
    ['{"id":1,"error":{},"result":1}', null],
    ['{"id\\u0031":1,"result":1}', null],
    ['[1]', null],
  ])('resultValueStart(%j): the result starts at %j', (text, rest) => {
    // The result's value starts where `rest` (the value and the closing brace) starts.
    expect(resultValueStart(text)).toBe(rest === null ? -1 : text.length - rest.length)
  })
})
