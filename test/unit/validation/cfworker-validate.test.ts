/**
 * The vendored copy of @cfworker/json-schema's `validate` (src/validators/cfworker-validate.ts)
 * against the library's own, on generated instances: the same verdict and the same errors (keyword,
 * instance location, keyword location), member names that need pointer escaping included (`~`,
 * `/`, `#`, a space, non-ASCII). The copy reads each schema's keywords once per schema object and
 * writes plain member names as their own pointer tokens; neither may change an answer. Error texts
 * are left out: the copy shortens those of `enum` and `const` on purpose.
 */
import fc from 'fast-check'
import { dereference, validate as libraryValidate, type Schema } from '@cfworker/json-schema'
import { describe, expect, it } from 'vitest'
import { validate as vendoredValidate } from '../../../src/validators/cfworker-validate'

const NAMES = ['city', 'units_1', 'a.b-c', 'a/b', 't~x', '~1', 'x#y', 'with space', 'é', '%25', '']

/** A schema naming every member of {@link NAMES}, nested once, with keywords of most kinds. */
function schemaFor(): Schema {
  const leaf = (i: number): Schema =>
    (
      [
        { type: 'string', minLength: 2, maxLength: 5 },
        { type: 'integer', minimum: 0, maximum: 9 },
        { enum: ['c', 'f', 1] },
        { type: 'array', items: { type: 'boolean' }, maxItems: 2 },
        { const: 'k' },
        { type: 'string', pattern: '^[A-Z]{2}$' },
      ] as Schema[]
    )[i % 6]!
  const properties: Record<string, Schema> = {}
  NAMES.forEach((n, i) => (properties[n] = leaf(i)))
  return {
    type: 'object',
    properties: { ...properties, inner: { type: 'object', properties, required: ['a/b'], additionalProperties: false } },
    patternProperties: { '^p~': { type: 'number' } },
    required: ['city', 't~x'],
    dependentRequired: { 'x#y': ['é'] },
  }
}

const member = fc.oneof(fc.constantFrom(...NAMES, 'p~1', 'p~/', 'extra'), fc.string({ maxLength: 3 }))
const leafValue = fc.oneof(
  fc.constantFrom('c', 'f', 'k', 'AB', 'abc', 'toolongvalue', 1, 3, 12, -1, 2.5, true, null),
  fc.array(fc.oneof(fc.boolean(), fc.integer()), { maxLength: 3 })
)
const flat = fc.dictionary(member, leafValue, { maxKeys: 8 })
const instance = fc.tuple(flat, fc.option(flat)).map(([o, inner]) => (inner === null ? o : { ...o, inner }))

const view = (r: { valid: boolean; errors: { keyword: string; instanceLocation: string; keywordLocation: string }[] }) => ({
  valid: r.valid,
  errors: r.errors.map((e) => [e.keyword, e.instanceLocation, e.keywordLocation]),
})

describe('vendored cfworker validate', () => {
  it('gives the library’s verdict and error locations, escaped member names included', () => {
    const schema = schemaFor()
    const lookup = dereference(schema)
    fc.assert(
      fc.property(instance, fc.boolean(), (value, shortCircuit) => {
        const ours = vendoredValidate(value, schema, '2020-12', lookup, shortCircuit)
        const theirs = libraryValidate(value, schema, '2020-12', lookup, shortCircuit)
        expect(view(ours)).toEqual(view(theirs))
      }),
      { numRuns: 2000 }
    )
  })

  it('writes an escaped member name into the instance location as the library does', () => {
    const schema = schemaFor()
    const r = vendoredValidate({ city: 'ok', 't~x': 'AB', 'a/b': 7, 'x#y': 1, 'with space': 'z', inner: {} }, schema, '2020-12', dereference(schema), false)
    const locations = r.errors.map((e: { instanceLocation: string }) => e.instanceLocation)
    expect(locations).toContain('#/a~1b')
    expect(locations).toContain('#/t~0x')
    expect(locations).toContain('#/x%23y')
    expect(locations).toContain('#/with%20space')
  })
})
