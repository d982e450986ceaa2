/** The one bound on shown texts (names, methods, values the caller sent, schema facts). */
import { describe, expect, it } from 'vitest'
import { boundText } from '../../../src/core/jsonrpc/bound-text'

describe('boundText', () => {
  it('leaves a text of at most n units alone', () => {
    expect(boundText('a'.repeat(64))).toBe('a'.repeat(64))
    expect(boundText('abc', 3)).toBe('abc')
  })

  it('cuts a longer one to n units ending in …, or to a plain prefix with mark ""', () => {
    expect(boundText('a'.repeat(65))).toBe('a'.repeat(63) + '…')
    expect(boundText('a'.repeat(65)).length).toBe(64)
    expect(boundText('abcdef', 4)).toBe('abc…')
    expect(boundText('a'.repeat(70), 64, '')).toBe('a'.repeat(64))
  })

  it('never ends on the first half of a surrogate pair', () => {
    const s = 'a'.repeat(62) + '😀' + 'b'
    expect(boundText(s)).toBe('a'.repeat(62) + '…')
    expect(boundText('a'.repeat(63) + '😀', 64, '')).toBe('a'.repeat(63))
    expect(/[\uD800-\uDBFF]…$/.test(boundText(s))).toBe(false)
  })
})
