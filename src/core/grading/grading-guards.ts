/**
 * @module core/grading/grading-guards
 * Grading as reply guards (docs/design.md §2 "The chain of guards", §6): the judging guards that
 * grade what the client gets, after the guards that change a result and before the pins' holds.
 * - `grading` (every response): the grade, and D10 / D11 (grade-reply.ts `gradeResponse`): a
 *   dropped result beside an error, a hidden failure marked `isError: true` by editing the text;
 * - `output_schema` (`OUTPUT_SCHEMA` warn | strict; a graded `tools/call`): D12
 *   (learn-from-replies.ts `onToolsCallReply`): `invalid` / `unchecked` in the grade row, and under
 *   `strict` an `isError` result in place of the invalid one.
 * Both read the relayed message, so they run where a reply is relayed, not on the edge's own pull.
 */
import type { Config } from '../config'
import type { ReplyGrade, ReplyGuard, ReplyVerdict } from '../guards/guard'
import { gradeResponse, type GradedResponse } from './grade-reply'
import { onToolsCallReply } from './learn-from-replies'

/** The grade of a graded response, without its text. */
function gradeOf(g: GradedResponse, outputSchema?: ReplyGrade['outputSchema']): ReplyGrade {
  const out: ReplyGrade = { grade: g.grade }
  if (g.code !== undefined) out.code = g.code
  if (g.isError) out.isError = true
  if (outputSchema !== undefined) out.outputSchema = outputSchema
  return out
}

/** The `grading` guard (built for every configuration; `HIDDEN_FAILURES` decides D11). */
export function gradingGuard(config: Config): ReplyGuard {
  const hiddenFailures = config.hiddenFailures
  const maxJsonDepth = config.maxJsonDepth
  return {
    name: 'grading',
    phase: 'reply',
    stage: 'judge',
    reads: 'message',
    appliesTo: () => true,
    check({ msg, text }, ctx): ReplyVerdict {
      const { p } = ctx.relay!
      const g = gradeResponse(msg, text, p, { hiddenFailures, maxJsonDepth, ...(ctx.correlationId !== undefined ? { correlationId: ctx.correlationId } : {}) })
      return g.text === undefined ? { kind: 'judge', grade: gradeOf(g) } : { kind: 'judge', grade: gradeOf(g), text: g.text }
    },
  }
}

const PASS: ReplyVerdict = { kind: 'pass' }

/** The `output_schema` guard, or null when `OUTPUT_SCHEMA` is `off` (nothing is checked). */
export function outputSchemaGuard(config: Config): ReplyGuard | null {
  if (config.outputSchema === 'off') return null
  return {
    name: 'output_schema',
    phase: 'reply',
    stage: 'judge',
    reads: 'message',
    appliesTo: (method) => method === 'tools/call',
    check({ msg, grade }, ctx): ReplyVerdict {
      const { ex, p } = ctx.relay!
      if (!grade) return PASS
      const checked = onToolsCallReply(ex, p, msg, grade)
      if (!checked.row && checked.graded === grade) return PASS
      const out = gradeOf(checked.graded, checked.row?.outputSchema)
      return checked.graded.text === undefined ? { kind: 'judge', grade: out } : { kind: 'judge', grade: out, text: checked.graded.text }
    },
  }
}
