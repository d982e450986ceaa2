/**
 * Every row of test/fixtures/vectors/spec-vectors.jsonl (86 rows, once per version each lists), on
 * the Node entry and on the built Worker in workerd: HTTP status, content type, body (codes and
 * ids) and whether the origin was contacted, against a real scripted HTTP origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RUNTIMES_AND_MIDDLEWARE } from '../helpers/runtimes'
import { assertCase, deploy, expandRows, readVectors, send, type Deployment } from './rules-harness'

const rows = readVectors('spec-vectors.jsonl')
const cases = expandRows(rows, 's')

describe.each(RUNTIMES_AND_MIDDLEWARE)('spec-vectors.jsonl on $name', ({ name, start }) => {
  let d: Deployment
  let ran = 0
  beforeAll(async () => {
    d = await deploy(start, cases)
  })
  afterAll(async () => {
    console.log(`[vectors-spec] ${name}: ${ran} of ${cases.length} runs (${rows.length} rows) passed`)
    await d?.close()
  })
  it('holds all 86 rows', () => {
    expect(rows.length).toBe(86)
  })
  for (const c of cases) {
    it(c.label, async () => {
      d.setCase(c)
      const a = await send(d, c)
      assertCase(c, a, d.forwarded(), d.pulls())
      ran++
    })
  }
})
