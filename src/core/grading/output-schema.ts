/**
 * @module core/grading/output-schema
 * D12: a `tools/call` result that is not `isError` is checked against the tool's `outputSchema`
 * (MCP 2025-06-18+ server/tools "Output Schema": servers MUST return conforming structured
 * results, clients SHOULD validate them). Pure; never throws.
 *
 * - `OUTPUT_SCHEMA=off`: nothing is checked.
 * - `warn` (default): the reply is relayed unchanged; the grade row is marked `outputSchema: "invalid"`.
 * - `strict`: the reply becomes an `isError: true` result naming the violated paths (from the
 *   declared schema only, never the values the tool returned); `structuredContent` is left out
 *   (MCP spec-rules: a client validates `structuredContent` only when `isError` is not true).
 * A declared `outputSchema` with no `structuredContent` in the result is a violation (the
 * official SDK client refuses such a result too). `isError` results, `input_required` results and
 * task handles are never checked (IBM/mcp-context-forge#4202: checking them hid the real error).
 */
import { EDGE_FAILURE_KEY } from '../jsonrpc/edge-failure'
import { isModern, type ProtocolVersion } from '../jsonrpc/versions'
import { isObject, resultText, type RawId } from '../jsonrpc/jsonrpc'
import { publicIssues, type PublicIssue } from '../validation/error-message'
import type { ResolvedTool } from '../validation/tool-record'
import { boundText } from '../jsonrpc/bound-text'

/** Upper bound of the strict-mode message, in UTF-16 code units. */
const MAX_TEXT = 2000

/** The outcome of the check. `text` is set only in strict mode when the result is replaced. */
export interface OutputCheck {
  /** `invalid` when the result breaks the schema; `unchecked` when the schema is unusable. */
  status: 'valid' | 'invalid' | 'unchecked' | 'skipped'
  issues?: PublicIssue[]
  text?: string
}

function underStructuredContent(p: PublicIssue): PublicIssue {
  const path = p.path === 'arguments' ? 'structuredContent' : `structuredContent${p.path.startsWith('[') ? '' : '.'}${p.path}`
  return { ...p, path }
}

/**
 * Checks one `tools/call` result.
 * @param result the result object as the origin sent it
 * @param tool the tool as validated for the call (null when unknown)
 * @param mode `OUTPUT_SCHEMA`
 * @param id the request id (for the replacement text), era the request's era
 */
export function checkOutputSchema(
  result: Record<string, unknown>,
  tool: ResolvedTool | null,
  mode: 'off' | 'warn' | 'strict',
  id: RawId,
  era: ProtocolVersion,
  toolName: string,
  correlationId?: string
): OutputCheck {
  if (mode === 'off' || !tool || tool.record.outputSchema === undefined) return { status: 'skipped' }
  if (result.isError === true || result.resultType === 'input_required' || isObject(result.task)) return { status: 'skipped' }
  if (!tool.outputValidate) return { status: 'unchecked' }
  let issues: PublicIssue[]
  if (!('structuredContent' in result)) {
    issues = [{ path: 'structuredContent', keyword: 'required', expected: 'is required: the tool declares an outputSchema' }]
  } else {
    let found
    try {
      found = tool.outputValidate(result.structuredContent)
    } catch {
      return { status: 'unchecked' }
    }
    if (!found) return { status: 'valid' }
    issues = publicIssues(found, tool.outputMessageSchema ?? tool.record.outputSchema).map(underStructuredContent)
  }
  if (mode !== 'strict') return { status: 'invalid', issues }
  const name = boundText(toolName)
  const lines = [
    `The result of tool "${name}" does not match its outputSchema:`,
    ...issues.map((i) => `  - ${i.path}: ${i.expected}`),
    "The edge withheld the result. Report this to the tool server's maintainer.",
  ]
  let text = lines.join('\n')
  if (text.length > MAX_TEXT) text = text.slice(0, MAX_TEXT - 1) + '…'
  const replaced: Record<string, unknown> = { content: [{ type: 'text', text }], isError: true }
  if (isModern(era)) replaced.resultType = 'complete'
  if (correlationId !== undefined)
    replaced._meta = {
      [EDGE_FAILURE_KEY]: {
        class: 'capability',
        code: 'output_schema_violation',
        correlationId,
        agentGuidance: 'The result was withheld because the tool broke its own output schema; do not retry as it is, tell the user.',
      },
    }
  return { status: 'invalid', issues, text: resultText(id, replaced) }
}
