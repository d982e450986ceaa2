/**
 * @module core/jsonrpc/edge-failure
 * The edge's own classification of an `isError: true` result it makes (invalid arguments, a
 * result over the validation budget, a hidden failure it marks, an output-schema violation it
 * withholds, a denial), shaped like the ToolFailure draft (SEP-3313): `{ class, code,
 * correlationId }` under the edge-owned `_meta` key {@link EDGE_FAILURE_KEY}, where
 * `correlationId` is the request id of the POST's log line (`rid`). An origin's own `_meta`
 * members (`io.modelcontextprotocol/toolFailure` included) are never changed: the edge only adds
 * its key. Pure.
 *
 * Classes are the draft's: `capability` (the call cannot succeed as it was made: the caller's
 * arguments, or a result the tool cannot give in the shape it declares; retrying as it is will not
 * help), `reliability` (a transient condition; the edge writes none today: its own transient
 * failures are JSON-RPC errors), `governance` (a policy of the edge refused it: tool pinning's
 * `policy_blocked`, the result checks' `secret_in_result`). Codes are the draft's where one fits
 * (`invalid_input`, `policy_blocked`), else the edge's own (`validation_budget`,
 * `hidden_failure`, `output_schema_violation`, `secret_in_result`, `result_check_broke_schema`).
 * `agentGuidance`, when set, is one short sentence for the calling model. The draft's own key
 * (`io.modelcontextprotocol/toolFailure`) belongs to the tool server: relayed as the origin sent
 * it, never written by the edge.
 */
import { scanJsonText } from './json-scan'

/** The `_meta` key of the edge's classification (edge-owned: a reverse-DNS prefix of its own). */
export const EDGE_FAILURE_KEY = 'io.mcp-edge/failure'

/** The behavioural classes of the ToolFailure draft (SEP-3313). */
export type FailureClass = 'capability' | 'reliability' | 'governance'

/** One classification. */
export interface EdgeFailure {
  class: FailureClass
  /** A stable code: `invalid_input`, `validation_budget`, `hidden_failure`, `output_schema_violation`, `policy_blocked`, `secret_in_result`, ... */
  code: string
  /** The request id of the log line (`rid`). */
  correlationId: string
  /** One short sentence for the calling model on how to go on (never quoting what was refused). */
  agentGuidance?: string
}

/** The classification's JSON text (members in the order class, code, correlationId, agentGuidance). */
export function edgeFailureJson(f: EdgeFailure): string {
  return JSON.stringify({ class: f.class, code: f.code, correlationId: f.correlationId, ...(f.agentGuidance !== undefined ? { agentGuidance: f.agentGuidance } : {}) })
}

/**
 * Adds the classification to a result object's JSON text (`{"content":...,"isError":true}`):
 * into its `_meta` object when it has one (the origin's members kept byte for byte, the edge's
 * key first), else as a new `_meta` member at the end. A `_meta` that is not an object is left as
 * it is (nothing is overwritten).
 * @param resultJson the text of one JSON object
 */
export function withEdgeFailure(resultJson: string, f: EdgeFailure): string {
  const el = scanJsonText(resultJson).elements[0]
  const member = `"${EDGE_FAILURE_KEY}":${edgeFailureJson(f)}`
  const meta = el?.members?.get('_meta')
  if (meta) {
    const raw = resultJson.slice(meta.start, meta.end)
    if (!raw.startsWith('{')) return resultJson
    const inner = scanJsonText(raw).elements[0]
    const empty = (inner?.members?.size ?? 0) === 0
    const fixed = '{' + member + (empty ? '' : ',') + raw.slice(1)
    return resultJson.slice(0, meta.start) + (empty ? `{${member}}` : fixed) + resultJson.slice(meta.end)
  }
  const close = resultJson.lastIndexOf('}')
  if (close < 0) return resultJson
  const empty = (el?.members?.size ?? 0) === 0
  return resultJson.slice(0, close) + (empty ? '' : ',') + `"_meta":{${member}}` + resultJson.slice(close)
}

/**
 * {@link withEdgeFailure} for an object text the edge wrote itself, known to have members and no
 * `_meta` (its own isError results): the member is appended without scanning the text.
 */
export function appendEdgeFailure(ownResultJson: string, f: EdgeFailure): string {
  return `${ownResultJson.slice(0, ownResultJson.lastIndexOf('}'))},"_meta":{"${EDGE_FAILURE_KEY}":${edgeFailureJson(f)}}}`
}
