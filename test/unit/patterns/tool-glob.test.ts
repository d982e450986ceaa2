/** src/core/patterns/tool-glob.ts: `*` and `?` only, case-sensitive, no other special character; agrees with a regex reference on random input; bounded work on hostile patterns. */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compilePattern, foldToolName, MAX_FOLDED_NAME, MAX_PATTERN_LENGTH, patternCovers, patternProblem, patternsMeet } from '../../../src/core/patterns/tool-glob'

/** Reference: the same glob as an anchored RegExp (test-only; the matcher itself uses none). */
function reference(pattern: string): RegExp {
  const body = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))).join('')
  return new RegExp(`^${body}$`, 's')
}

describe('compilePattern', () => {
  it.each([
    ['get_forecast', 'get_forecast', true],
    ['get_forecast', 'get_forecasts', false],
    ['get_*', 'get_', true],
    ['get_*', 'get_forecast', true],
    ['get_*', 'Get_forecast', false],
    ['*_admin', 'db_admin', true],
    ['*_admin', 'db_admin2', false],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['ab*b', 'ab', false],
    ['ab*b', 'abb', true],
    ['?', 'x', true],
    ['?', '', false],
    ['?', 'xy', false],
    ['fs.read?', 'fs.read1', true],
    ['fs.read?', 'fsXread1', false],
    ['*', '', true],
    ['*', 'anything at all', true],
    ['a/b*', 'a/b/c', true],
    ['a\\b', 'a\\b', true],
    ['a?*?', 'ab', false],
    ['a?*?', 'abc', true],
    ['*a?a*', 'xxaba', true],
  ])('%s against %s: %s', (pattern, name, expected) => {
    expect(compilePattern(pattern).test(name)).toBe(expected)
  })

  it('agrees with a RegExp reference on random patterns and names (small alphabet, so matches happen)', () => {
    const ch = fc.constantFrom('a', 'b', '_', '*', '?')
    const nameCh = fc.constantFrom('a', 'b', '_')
    fc.assert(
      fc.property(fc.array(ch, { maxLength: 8 }), fc.array(nameCh, { maxLength: 12 }), (p, n) => {
        const pattern = p.join('')
        if (pattern === '') return
        const name = n.join('')
        expect(compilePattern(pattern).test(name)).toBe(reference(pattern).test(name))
      }),
      { numRuns: 3000 }
    )
  })

  it('a hostile pattern against a long near-miss name finishes (no exponential backtracking)', () => {
    const pattern = '*a'.repeat(60) + 'b'
    const name = 'a'.repeat(128)
    const m = compilePattern(pattern)
    expect(m.test(name)).toBe(false)
    expect(m.test(name + 'b')).toBe(true)
  })
})

describe('patternProblem', () => {
  it.each([
    ['', 'an empty name'],
    ['a b', 'whitespace, a control character, a comma or a quote'],
    ['a\tb', 'whitespace, a control character, a comma or a quote'],
    ['a"b', 'whitespace, a control character, a comma or a quote'],
    ['x'.repeat(MAX_PATTERN_LENGTH + 1), `longer than ${MAX_PATTERN_LENGTH} characters`],
  ])('%j: %s', (p, why) => {
    expect(patternProblem(p)).toBe(why)
  })
  it('accepts names with dots, dashes, slashes and colons', () => {
    for (const p of ['fs.read', 'a-b', 'ns/tool', 'srv:tool*', '*']) expect(patternProblem(p)).toBeNull()
  })
})

describe('patternCovers and patternsMeet (decided on the patterns, checked against every name up to 5 characters)', () => {
  const names = ['']
  for (let n = 1; n <= 5; n++) for (const w of names.filter((x) => x.length === n - 1)) for (const c of 'ab') names.push(w + c)
  const patterns = ['']
  for (let n = 1; n <= 3; n++) for (const p of patterns.filter((x) => x.length === n - 1)) for (const c of 'ab*?') patterns.push(p + c)
  patterns.shift()
  it('a cover is never claimed that a name refutes; meeting is exact', () => {
    for (const outer of patterns)
      for (const inner of patterns) {
        const o = compilePattern(outer)
        const i = compilePattern(inner)
        if (patternCovers(outer, inner)) for (const n of names) if (i.test(n)) expect(o.test(n), `${outer} covers ${inner}: ${n}`).toBe(true)
        expect(patternsMeet(outer, inner), `${outer} meets ${inner}`).toBe(names.some((n) => o.test(n) && i.test(n)))
      }
  })
  it.each([
    ['admin_*', 'admin_drop', true],
    ['admin_*', 'admin_*_x', true],
    ['*', '*', true],
    ['*', 'a?b*', true],
    ['admin_*', '*', false],
    ['a?', 'a*', false],
    ['*_drop', 'admin_*', false],
  ])('%s covers %s: %s', (outer, inner, covers) => {
    expect(patternCovers(outer, inner)).toBe(covers)
  })
  it.each([
    ['admin_*', 'get_*', false],
    ['admin_*', '*_drop', true],
    ['a?c', 'ab*', true],
    ['echo', 'admin_*', false],
  ])('%s meets %s: %s', (a, b, meet) => {
    expect(patternsMeet(a, b)).toBe(meet)
  })
})

describe('foldToolName and matches', () => {
  it.each([
    ['delete_file', 'delete_file'],
    ['DELETE_FILE', 'delete_file'],
    [' delete_file\t', 'delete_file'],
    ['ｄelete_file', 'delete_file'],
    ['Delete_File\u200b', 'delete_file'],
    ['del\u00adete_file', 'delete_file'],
    ['STRASSE', 'strasse'],
    ['straße', 'strasse'],
    ['ﬁle', 'file'],
    ['météo', 'météo'],
    ['MÉTÉO', 'météo'],
    // Invisible characters that are not format characters (Default_Ignorable_Code_Point, which
    // NFKC_Casefold removes): combining grapheme joiner, Hangul fillers, a variation selector, a tag
    ['delete_file\u034f', 'delete_file'],
    ['delete_file\u115f', 'delete_file'],
    ['delete_\u3164file', 'delete_file'],
    ['delete_file\uffa0', 'delete_file'],
    ['delete\ufe0f_file', 'delete_file'],
    ['delete_file\u{e0041}', 'delete_file'],
  ])('%j folds to %j', (name, folded) => {
    expect(foldToolName(name)).toBe(folded)
    expect(foldToolName(folded)).toBe(folded)
  })

  it('test stays exact; matches also takes the fold of the name against the fold of the pattern', () => {
    const p = compilePattern('delete_*')
    expect(p.test('DELETE_FILE')).toBe(false)
    for (const n of ['delete_file', 'DELETE_FILE', ' delete_file', 'ｄelete_file']) expect(p.matches(n, foldToolName(n)), n).toBe(true)
    expect(p.matches('remove_file', foldToolName('remove_file'))).toBe(false)
    const upper = compilePattern('Admin_?')
    expect(upper.matches('admin_x', foldToolName('admin_x'))).toBe(true)
  })

  it('the fold is idempotent on random strings', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (s) => foldToolName(foldToolName(s)!) === foldToolName(s)))
  })

  it('a name past MAX_FOLDED_NAME that needs folding is not folded (bounded work) and matches every pattern', () => {
    const long = ' '.repeat(MAX_FOLDED_NAME) + 'delete_file'
    expect(foldToolName(long)).toBeNull()
    expect(compilePattern('delete_*').matches(long, null)).toBe(true)
    const plain = 'x'.repeat(MAX_FOLDED_NAME * 4)
    expect(foldToolName(plain)).toBe(plain)
  })
})
