/**
 * JSON object text as origins write it, for property tests of readers that must agree with
 * `JSON.parse` (fast-check): member lists whose names may repeat (the last one is what `JSON.parse`
 * keeps), names written with `\u` escapes, and white space between every token.
 */
import fc from 'fast-check'

/** An object as an ordered list of members; a name may appear more than once. */
export interface MemberList {
  entries: [string, unknown][]
}

const isList = (v: unknown): v is MemberList => v !== null && typeof v === 'object' && Array.isArray((v as MemberList).entries)

/** A member name token with some characters (bits of `mask`) and every character JSON needs escaped written as `\u` escapes. */
function writeName(name: string, mask: number): string {
  let out = '"'
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i)
    if ((mask >> (i % 31)) & 1 || c < 0x20 || c === 0x22 || c === 0x5c) out += '\\u' + c.toString(16).padStart(4, '0')
    else out += name[i]
  }
  return out + '"'
}

/**
 * JSON text of `v`: a {@link MemberList} as an object with `w` around every token and names
 * escaped per `mask`; any other value as `JSON.stringify` writes it (indented when `w` holds a line break).
 */
export function writeJson(v: unknown, w: string, mask: number): string {
  if (isList(v)) {
    const parts = v.entries.map(([k, x]) => `${w}${writeName(k, mask)}${w}:${w}${writeJson(x, w, mask)}${w}`)
    return `{${parts.join(',')}${parts.length ? '' : w}}`
  }
  return JSON.stringify(v, null, w.includes('\n') ? 1 : undefined)
}

/** White space between tokens. */
export const jsonWs = fc.constantFrom('', ' ', '\n  ', '\t', '\r\n')

/** Member lists nested up to a few levels, names from `names`, leaves from `leaves`. */
export function memberLists(names: fc.Arbitrary<string>, leaves: fc.Arbitrary<unknown>): fc.Arbitrary<MemberList> {
  return fc.letrec<{ list: MemberList; value: unknown }>((tie) => ({
    list: fc.record({ entries: fc.array(fc.tuple(names, tie('value')), { maxLength: 6 }) }),
    value: fc.oneof({ depthSize: 'small' }, leaves, tie('list')),
  })).list
}
