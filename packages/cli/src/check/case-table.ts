/**
 * @module check/case-table
 * The cases of `mcp-edge check` as one table ({@link CASE_TABLE}): for one protocol version, the
 * requests to send and, for each, the rule the specs set and the judgement of what the server
 * answered. Each case family is a file of ./cases/ (messages, transport, arguments, valid-call,
 * batch; the rows that are not one request in ./cases/rows and ./cases/tool-set). Pure; no I/O. docs/check.md lists
 * every case with its rule and source; grades are defined in ./cases/types.
 */
import { argumentsNotObject, missingRequired, wrongType } from './cases/arguments'
import { batch } from './cases/batch'
import { invalidRequest, notification, parseError, unknownTool } from './cases/messages'
import { envelopeMissing, headerMismatch, originHeader, versionHeader, withCapabilityRule } from './cases/transport'
import type { CaseGroup, PlanContext, PlannedCase } from './cases/types'
import { validCall } from './cases/valid-call'
import type { HttpAnswer } from './reply'

export * from './cases/types'
export { buildRequest, CLIENT_INFO, envelope, UNKNOWN_TOOL_NAME, type BuiltRequest } from './cases/requests'
export { judgeMistake, type MistakeSpec } from './cases/mistakes'
export { contentTypeRow, judgeModernRefusal, judgeNotification, judgeOrigin, judgeUnsupportedVersion, judgeVersionHeader } from './cases/transport'
export { judgeValidCall } from './cases/valid-call'
export { judgeBatch } from './cases/batch'
export { authorizationRow, handshakeRow, notCalledRow, schemaRow, toolsListRow, unlistedToolRow, type ToolListing } from './cases/rows'
export { toolSetRow } from './cases/tool-set'

/**
 * Every planned case, in sending order: the message and transport cases once per version; per
 * tool its argument cases (all three for one tool, then the next tool); then the valid calls of
 * the tools marked safe; then (2025-03-26 only) the batch. A new case is one entry here and one
 * definition in its family's file.
 */
export const CASE_TABLE: readonly CaseGroup[] = [
  { each: 'version', cases: [parseError, invalidRequest, notification, unknownTool, originHeader, versionHeader, headerMismatch, envelopeMissing] },
  { each: 'tool', cases: [missingRequired, wrongType, argumentsNotObject] },
  { each: 'tool', cases: [validCall] },
  { each: 'version', cases: [batch] },
]

/**
 * The requests of every case of {@link CASE_TABLE} for one protocol version, in the order they
 * are sent, ids counting up from `ctx.firstId`. Every judgement also applies the capability rule
 * (a server that sends check a request on the stream fails the case).
 */
export function planCases(ctx: PlanContext): PlannedCase[] {
  const v = ctx.version
  let id = ctx.firstId
  const nextId = () => id++
  const out: PlannedCase[] = []
  for (const group of CASE_TABLE) {
    if (group.each === 'version') {
      for (const c of group.cases) if (!c.versions || c.versions(v)) out.push(c.plan(ctx, nextId))
    } else {
      for (const t of ctx.tools)
        for (const c of group.cases) {
          const planned = c.plan(ctx, t, nextId)
          if (planned) out.push(planned)
        }
    }
  }
  return out.map((c) => ({ ...c, judge: (a: HttpAnswer) => withCapabilityRule(c.judge(a), a, v) }))
}
