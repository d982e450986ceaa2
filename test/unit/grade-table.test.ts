/**
 * The grade table's header (src/core/grade-table.ts; docs/design.md §6): `MCP-Edge-Grade` counts
 * the grades of every id, in a fixed order.
 */
import { describe, expect, it } from 'vitest'
import { gradeHeader, type GradeRow } from '../../src/core/grade-table'

describe('gradeHeader', () => {
  const row = (grade: GradeRow['grade']): GradeRow => ({ id: '1', method: 'm', grade, answeredBy: 'edge' })
  it('one row: its grade; several: counts in a fixed order', () => {
    expect(gradeHeader([row('missing')])).toBe('missing=1')
    expect(gradeHeader([row('unvalidated'), row('ok'), row('rejected'), row('ok')])).toBe('ok=2 rejected=1 unvalidated=1')
  })
})
