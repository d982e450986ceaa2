/**
 * The tool digest (src/core/pinning/tool-digest.ts): RFC 8785 (JCS) over the whole Tool, SHA-256,
 * `sha256:` + lowercase hex; field sub-digests and the material/cosmetic classing of a change.
 * Expected digests are computed here with node:crypto over the literal expected JCS text, never
 * with the code under test.
 */
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { canonicalJson, classifyChange, DigestMemo, fieldClass, fieldDigests, isToolDigest, sha256Digest, toolDigest } from '../../../src/core/pinning/tool-digest'

const sha = (text: string) => 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex')

/** The worked example docs/pinning.md quotes (keep the two in step). */
const EXAMPLE_TOOL = {
  name: 'get_forecast',
  title: 'Forecast',
  description: 'Weather forecast for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1, maximum: 16 } }, required: ['city'] },
  annotations: { readOnlyHint: true },
}
const EXAMPLE_JCS =
  '{"annotations":{"readOnlyHint":true},"description":"Weather forecast for a city","inputSchema":{"properties":{"city":{"type":"string"},"days":{"maximum":16,"minimum":1,"type":"integer"}},"required":["city"],"type":"object"},"name":"get_forecast","title":"Forecast"}'
const EXAMPLE_DIGEST = 'sha256:f98f49a5482e3da0569a1295243a9de897da96d3946590f5c49997b70b66137b'

/** Rebuilds a value with every object's members in a shuffled order (JSON.parse keeps insertion order). */
function permute(v: unknown, pick: (n: number) => number): unknown {
  if (Array.isArray(v)) return v.map((x) => permute(x, pick))
  if (typeof v !== 'object' || v === null) return v
  const keys = Object.keys(v)
  const out: Record<string, unknown> = {}
  while (keys.length > 0) {
    const k = keys.splice(pick(keys.length), 1)[0]!
    // defineProperty, not assignment: a `__proto__` member must stay an own member, as JSON.parse makes it.
    Object.defineProperty(out, k, { value: permute((v as Record<string, unknown>)[k], pick), enumerable: true, writable: true, configurable: true })
  }
  return out
}

describe('tool digest', () => {
  it('the worked example: its JCS text and its digest (node:crypto over that literal text)', async () => {
    const c = canonicalJson(EXAMPLE_TOOL)
    expect(c).toEqual({ ok: true, text: EXAMPLE_JCS })
    expect(sha(EXAMPLE_JCS)).toBe(EXAMPLE_DIGEST)
    expect(await toolDigest(EXAMPLE_TOOL)).toEqual({ ok: true, digest: EXAMPLE_DIGEST, jcs: EXAMPLE_JCS })
  })

  it('member order and whitespace never change the digest (every permutation of the example, and parsed text)', async () => {
    const orders = [...Array(20).keys()].map((seed) => permute(EXAMPLE_TOOL, (n) => (seed * 7 + n * 3) % n))
    orders.push(JSON.parse(JSON.stringify(EXAMPLE_TOOL, null, 4)))
    orders.push(
      JSON.parse(`{ "title" : "Forecast", "name":"get_forecast" ,"annotations":{"readOnlyHint":true},
      "inputSchema":{"required":["city"],"type":"object","properties":{"days":{"maximum":16,"type":"integer","minimum":1},"city":{"type":"string"}}},
      "description":"Weather forecast for a city"}`)
    )
    for (const t of orders) expect(await toolDigest(t)).toEqual({ ok: true, digest: EXAMPLE_DIGEST, jcs: EXAMPLE_JCS })
  })

  it('property: a random JSON object and any reordering of its members have one digest', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), fc.jsonValue()), fc.integer({ min: 1, max: 1000 }), async (tool, seed) => {
        const a = await toolDigest(tool)
        const b = await toolDigest(permute(tool, (n) => (seed + n) % n))
        expect(b).toEqual(a)
        if (a.ok) expect(a.digest).toBe(sha(a.jcs))
      }),
      { numRuns: 200 }
    )
  })

  it('every member counts, known or not: one changed character anywhere changes the digest', async () => {
    const base = {
      ...EXAMPLE_TOOL,
      outputSchema: { type: 'object' },
      icons: [{ src: 'https://x.example/i.png' }],
      execution: { taskSupport: 'optional' },
      _meta: { a: 1 },
      'x-vendor': 'v',
    }
    const d0 = await toolDigest(base)
    const variants = [
      { ...base, name: 'get_forecasT' },
      { ...base, title: 'Forecast ' },
      { ...base, description: 'Weather forecast for a city.' },
      { ...base, inputSchema: { ...base.inputSchema, required: [] } },
      { ...base, outputSchema: { type: 'object', additionalProperties: false } },
      { ...base, annotations: { readOnlyHint: false } },
      { ...base, icons: [{ src: 'https://x.example/j.png' }] },
      { ...base, execution: { taskSupport: 'required' } },
      { ...base, _meta: { a: 2 } },
      { ...base, 'x-vendor': 'w' },
      { ...base, 'x-new': null },
    ]
    const seen = new Set([d0.ok && d0.digest])
    for (const v of variants) {
      const d = await toolDigest(v)
      expect(d.ok).toBe(true)
      if (d.ok) seen.add(d.digest)
    }
    expect(seen.size).toBe(variants.length + 1)
  })

  it('digest form: sha256: and 64 lowercase hex digits', async () => {
    expect(await sha256Digest('')).toBe('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(isToolDigest(EXAMPLE_DIGEST)).toBe(true)
    for (const bad of ['sha256:' + 'A'.repeat(64), 'sha256:' + 'a'.repeat(63), 'sha512:' + 'a'.repeat(64), 'a'.repeat(64), 7, null]) expect(isToolDigest(bad)).toBe(false)
  })
})

describe('DigestMemo', () => {
  it('gives the same digests as hashing, and keeps at most maxEntries texts and maxChars characters', async () => {
    const memo = new DigestMemo(3, 100)
    expect(await toolDigest(EXAMPLE_TOOL, memo)).toEqual({ ok: true, digest: EXAMPLE_DIGEST, jcs: EXAMPLE_JCS })
    // The example's JCS text is longer than 100 characters: hashed, never kept.
    expect(memo.size).toBe(0)
    for (const t of ['a', 'b', 'c', 'd']) expect(await memo.digest(t)).toBe(sha(t))
    expect(memo.size).toBe(3)
    expect(await memo.digest('b')).toBe(sha('b'))
    const big = 'x'.repeat(60)
    await memo.digest(big)
    await memo.digest(big + 'y')
    // 60 + 61 > 100: the older long text went too, along with the short ones before it.
    expect(memo.size).toBeLessThanOrEqual(2)
    expect(await memo.digest(big + 'y')).toBe(sha(big + 'y'))
  })

  it('concurrent digests of one text are kept once', async () => {
    const memo = new DigestMemo(10, 1000)
    const all = await Promise.all([memo.digest('same'), memo.digest('same'), memo.digest('same')])
    expect(new Set(all)).toEqual(new Set([sha('same')]))
    expect(memo.size).toBe(1)
  })
})

describe('RFC 8785 serialization', () => {
  /** RFC 8785 Appendix B: IEEE 754 bit patterns and their JCS text. */
  const APPENDIX_B: [string, string][] = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ]
  const fromBits = (hex: string) => new DataView(Uint8Array.from(hex.match(/../g)!.map((b) => parseInt(b, 16))).buffer).getFloat64(0)

  it('numbers as RFC 8785 Appendix B writes them', () => {
    for (const [bits, text] of APPENDIX_B) expect([bits, canonicalJson(fromBits(bits))]).toEqual([bits, { ok: true, text }])
  })

  it('numbers from JSON text: 1.0 -> 1, 1e21 -> 1e+21, -0 -> 0, 1E-7 -> 1e-7, big integers as doubles', () => {
    const parsed = JSON.parse('[1.0, 1e21, -0, 1E-7, 100, 0.1, 1e20, 12345678901234567890, 2.50]')
    expect(canonicalJson(parsed)).toEqual({ ok: true, text: '[1,1e+21,0,1e-7,100,0.1,100000000000000000000,12345678901234567000,2.5]' })
  })

  it('member names sorted by UTF-16 code units (RFC 8785 §3.2.3 example)', () => {
    const obj = JSON.parse(
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}'
    )
    // (Compared as text: JSON.parse would put the integer-like name "1" first again.)
    expect(canonicalJson(obj)).toEqual({
      ok: true,
      text: '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    })
  })

  it('strings: minimal escapes, non-ASCII as UTF-8 text, no Unicode normalization', async () => {
    const c = canonicalJson({ s: 'é\u0301 € \ud83d\ude00 "q" \\ \n\t\u0001\u001f\u007f\u2028' })
    expect(c).toEqual({ ok: true, text: '{"s":"é\u0301 € \ud83d\ude00 \\"q\\" \\\\ \\n\\t\\u0001\\u001f\u007f\u2028"}' })
    // Precomposed and decomposed forms are different definitions.
    const a = await toolDigest({ name: 'caf\u00e9' })
    const b = await toolDigest({ name: 'cafe\u0301' })
    expect(a.ok && b.ok && a.digest !== b.digest).toBe(true)
    expect(a.ok && a.digest).toBe(sha('{"name":"caf\u00e9"}'))
  })

  it('a lone surrogate has no JCS form: no digest at all, with the place named', async () => {
    const tool = JSON.parse('{"name":"t","inputSchema":{"type":"object","properties":{"p":{"enum":["ok","\\ud800x"]}}}}')
    expect(await toolDigest(tool)).toEqual({ ok: false, problem: { reason: 'lone-surrogate', pointer: '/inputSchema/properties/p/enum/1' } })
    expect(await toolDigest(JSON.parse('{"name":"t","description":"\\udc00"}'))).toEqual({ ok: false, problem: { reason: 'lone-surrogate', pointer: '/description' } })
    // In a member name: the pointer shows the surrogate escaped.
    expect(await toolDigest(JSON.parse('{"name":"t","_meta":{"k\\ud800":1}}'))).toEqual({ ok: false, problem: { reason: 'lone-surrogate', pointer: '/_meta/k\\u{D800}' } })
    // A proper pair is fine.
    expect((await toolDigest(JSON.parse('{"name":"\\ud83d\\ude00"}'))).ok).toBe(true)
  })

  it('a number out of range (JSON 1e400 parses to Infinity) has no JCS form', async () => {
    expect(await toolDigest(JSON.parse('{"name":"t","inputSchema":{"maximum":1e400}}'))).toEqual({
      ok: false,
      problem: { reason: 'non-finite-number', pointer: '/inputSchema/maximum' },
    })
  })

  it('a tool that is not an object has no digest', async () => {
    for (const v of [null, 'x', 1, [], [{ name: 't' }]]) expect(await toolDigest(v)).toEqual({ ok: false, problem: { reason: 'not-an-object', pointer: '' } })
  })

  it('a deep schema (1 000 levels, far past the default MAX_JSON_DEPTH of 64) digests; past the stack (20 000) it gets no digest, never a wrong one', async () => {
    const nest = (levels: number) => {
      let schema: unknown = { type: 'string' }
      for (let i = 0; i < levels; i++) schema = { items: schema }
      return schema
    }
    expect((await toolDigest({ name: 'deep', inputSchema: nest(1_000) })).ok).toBe(true)
    // canonicalize 4 (the release whose engines admit Node 20) recurses: such a tool stays unapprovable.
    expect((await toolDigest({ name: 'deeper', inputSchema: nest(20_000) })).ok).toBe(false)
    let bad: unknown = '\ud800'
    for (let i = 0; i < 20_000; i++) bad = [bad]
    const e = await toolDigest({ name: 'deep', inputSchema: bad })
    expect(e.ok === false && e.problem.reason).toBe('lone-surrogate')
    // The pointer to it is bounded (first and last steps, the rest counted).
    expect(e.ok === false && e.problem.pointer).toBe('/inputSchema' + '/0'.repeat(7) + '/…19985 more…' + '/0'.repeat(8))
  })
})

describe('field sub-digests and change classes', () => {
  it('one sub-digest per member present, over that member value’s JCS', async () => {
    const f = await fieldDigests({ ...EXAMPLE_TOOL, __proto__x: 1 })
    expect([...f.keys()].sort()).toEqual(['__proto__x', 'annotations', 'description', 'inputSchema', 'name', 'title'])
    expect(f.get('name')).toBe(sha('"get_forecast"'))
    expect(f.get('title')).toBe(sha('"Forecast"'))
    expect(f.get('inputSchema')).toBe(sha('{"properties":{"city":{"type":"string"},"days":{"maximum":16,"minimum":1,"type":"integer"}},"required":["city"],"type":"object"}'))
    const withProto = JSON.parse('{"name":"t","__proto__":{"x":1}}')
    expect((await fieldDigests(withProto)).get('__proto__')).toBe(sha('{"x":1}'))
    expect((await fieldDigests(JSON.parse('{"name":"t","description":"\\ud800"}'))).get('description')).toBeNull()
  })

  it('classes: title and icons cosmetic; name, description, schemas, annotations, execution, _meta and unknown members material', () => {
    expect(['title', 'icons'].map(fieldClass)).toEqual(['cosmetic', 'cosmetic'])
    expect(['name', 'description', 'inputSchema', 'outputSchema', 'annotations', 'execution', '_meta', 'x-anything'].map(fieldClass)).toEqual(Array(8).fill('material'))
  })

  it('classifyChange: none, cosmetic only, material, added and removed members', async () => {
    const a = await fieldDigests(EXAMPLE_TOOL)
    expect(classifyChange(a, await fieldDigests(permute(EXAMPLE_TOOL, () => 0)))).toEqual({ class: 'none', fields: [] })
    const cosmetic = await fieldDigests({ ...EXAMPLE_TOOL, title: 'Forecast (beta)', icons: [{ src: 'https://x.example/i.png' }] })
    expect(classifyChange(a, cosmetic)).toEqual({
      class: 'cosmetic',
      fields: [
        { field: 'icons', change: 'added', class: 'cosmetic', served: sha('[{"src":"https://x.example/i.png"}]') },
        { field: 'title', change: 'modified', class: 'cosmetic', approved: sha('"Forecast"'), served: sha('"Forecast (beta)"') },
      ],
    })
    const { annotations: _dropped, ...rest } = EXAMPLE_TOOL
    const material = await fieldDigests({ ...rest, title: 'Forecast (beta)', outputSchema: { type: 'object' } })
    const c = classifyChange(a, material)
    expect(c.class).toBe('material')
    expect(c.fields.map((f) => [f.field, f.change, f.class])).toEqual([
      ['annotations', 'removed', 'material'],
      ['outputSchema', 'added', 'material'],
      ['title', 'modified', 'cosmetic'],
    ])
  })

  it('a member without a JCS form never counts as unchanged', async () => {
    const a = await fieldDigests(JSON.parse('{"name":"t","description":"\\ud800"}'))
    const c = classifyChange(a, a)
    expect(c).toEqual({ class: 'material', fields: [{ field: 'description', change: 'modified', class: 'material', approved: null, served: null }] })
  })
})

describe('DigestMemo per entry', () => {
  it('an entry equal to one seen is answered from memory; member order, -0 and escapes keep their JCS meaning', async () => {
    const memo = new DigestMemo()
    const a = await toolDigest(JSON.parse('{"name":"t","description":"caf\\u00e9","n":-0}'), memo)
    const b = await toolDigest(JSON.parse('{"name":"t","description":"café","n":0}'), memo)
    const c = await toolDigest(JSON.parse('{"description":"café","name":"t","n":0}'), memo)
    expect(a).toEqual({ ok: true, digest: sha('{"description":"café","n":0,"name":"t"}'), jcs: '{"description":"café","n":0,"name":"t"}' })
    expect([b, c]).toEqual([a, a])
    // The second is the same value written another way: no new canonicalization; the third's key differs (member order).
    expect(memo.entriesDigested).toBe(2)
  })

  it('a definition with 1e400 never borrows the digest of one with null, nor a lone surrogate that of its escape', async () => {
    const memo = new DigestMemo()
    expect((await toolDigest(JSON.parse('{"name":"t","x":null}'), memo)).ok).toBe(true)
    const inf = await toolDigest(JSON.parse('{"name":"t","x":1e400}'), memo)
    expect(inf).toEqual({ ok: false, problem: { reason: 'non-finite-number', pointer: '/x' } })
    expect((await toolDigest(JSON.parse('{"name":"t","x":"\\\\ud800"}'), memo)).ok).toBe(true)
    expect((await toolDigest(JSON.parse('{"name":"t","x":"\\ud800"}'), memo)).ok).toBe(false)
  })

  it('keeps at most maxEntries entries', async () => {
    const memo = new DigestMemo(3)
    for (let i = 0; i < 5; i++) await toolDigest({ name: `t${i}` }, memo)
    await toolDigest({ name: 't0' }, memo)
    expect(memo.entriesDigested).toBe(6)
    await toolDigest({ name: 't4' }, memo)
    expect(memo.entriesDigested).toBe(6)
  })
})
