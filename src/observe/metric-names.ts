/**
 * @module observe/metric-names
 * The series both metrics implementations export (src/observe/prom-metrics.ts on Node,
 * src/observe/text-metrics.ts on Workers): names, help texts, label names, histogram buckets, and
 * the bounding of label values. Prometheus naming conventions: counters end in `_total`,
 * durations are in seconds (`_seconds`), sizes in bytes (`_bytes`). docs/observability.md lists them.
 */
import { boundText } from '../core/jsonrpc/bound-text'
import { MCP_REQUEST_METHODS } from '../core/jsonrpc/mcp-methods'
import { reasonsCountedIn } from '../core/guards/denial'

/** Upper bounds (seconds) of the edge-added latency histogram: the edge's own work is 10-100 us per call. */
export const EDGE_SECONDS_BUCKETS = [0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1]
/** Upper bounds (seconds) of the origin latency histogram (to the origin's response headers). */
export const ORIGIN_SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** The series, with their help texts and label names. */
export const SERIES = {
  grades: { name: 'mcp_edge_grades_total', help: 'JSON-RPC ids graded by the edge, per origin, tool and grade.', labels: ['origin', 'tool', 'grade'] },
  requests: { name: 'mcp_edge_requests_total', help: 'JSON-RPC ids graded by the edge, per origin, method and grade.', labels: ['origin', 'method', 'grade'] },
  posts: { name: 'mcp_edge_posts_total', help: 'POSTs answered, per origin: answered_by="edge" (nothing forwarded) or "origin" (forwarded).', labels: ['origin', 'answered_by'] },
  edgeSeconds: {
    name: 'mcp_edge_added_latency_seconds',
    help: 'Time the edge itself spent on a POST (start to answer, or to the SSE headers), the origin call excluded.',
    labels: ['origin'],
  },
  originSeconds: { name: 'mcp_edge_origin_latency_seconds', help: 'Time from sending a POST to the origin until its response headers.', labels: ['origin'] },
  requestBytes: { name: 'mcp_edge_request_bytes_total', help: 'Bytes of POST bodies received, per origin.', labels: ['origin'] },
  responseBytes: { name: 'mcp_edge_response_bytes_total', help: 'Bytes of POST answers sent (JSON bodies and SSE streams), per origin.', labels: ['origin'] },
  denials: {
    name: 'mcp_edge_denials_total',
    // The label values are the denial reasons of guards/denial.ts that this counter counts (one vocabulary).
    help: `Requests or batch elements the edge refused on access grounds, per reason (${reasonsCountedIn('denials').join(', ')}).`,
    labels: ['reason'],
  },
  openStreams: { name: 'mcp_edge_open_sse_streams', help: 'SSE streams open to clients (POST replies and GET streams), per origin.', labels: ['origin'] },
  toolPins: {
    name: 'mcp_edge_tool_pins',
    help: 'Tool names per pin state (approved, changed, pending, removed), per origin, over the scopes this instance holds.',
    labels: ['origin', 'state'],
  },
  pinBlocks: {
    name: 'mcp_edge_tool_pin_blocks_total',
    help: 'Tool pinning refusals per origin and reason: calls (changed, pending, unknown, pins-unavailable), lists refused (pins-unavailable, malformed-list) and lists relayed with tools left out (list-omitted).',
    labels: ['origin', 'reason'],
  },
  resultFindings: {
    name: 'mcp_edge_result_findings_total',
    help: 'Findings of the result checks (RESULT_SECRETS, RESULT_CONTROL, MAX_RESULT_TEXT_BYTES) in tool results, per origin, category and action.',
    labels: ['origin', 'category', 'action'],
  },
  virtualLeftOut: {
    name: 'mcp_edge_virtual_origin_left_out_total',
    help: 'Times an origin of a virtual server was left out (down, or past its timeout) of a merged tool list, a session or a routed call, per virtual server and origin.',
    labels: ['server', 'origin'],
  },
} as const

/** Registry counters (the tool registry's `stats`), read at scrape time. */
export const REGISTRY_SERIES: { stat: string; name: string; help: string }[] = [
  { stat: 'kvReads', name: 'mcp_edge_registry_kv_reads_total', help: 'Tool records read from the KV store.' },
  { stat: 'kvWrites', name: 'mcp_edge_registry_kv_writes_total', help: 'Tool records written to the KV store.' },
  { stat: 'memoryHits', name: 'mcp_edge_registry_memory_hits_total', help: 'Tool lookups answered from memory, without a KV read.' },
  { stat: 'compiles', name: 'mcp_edge_registry_compiles_total', help: 'Schemas compiled (input and output).' },
  { stat: 'schemaErrors', name: 'mcp_edge_registry_schema_errors_total', help: 'Schemas the edge could not use (unsupported dialect, remote $ref, compile failure).' },
  { stat: 'refreshes', name: 'mcp_edge_registry_refreshes_total', help: 'Tool-list pulls started.' },
  { stat: 'refreshFailures', name: 'mcp_edge_registry_refresh_failures_total', help: 'Tool-list pulls that failed.' },
  { stat: 'refreshesRefused', name: 'mcp_edge_registry_refreshes_refused_total', help: 'Tool-list pulls refused by the per-origin budget (REFRESH_BUDGET_PER_MIN).' },
]

/** The JSON-RPC methods that become `method` label values (the MCP request methods); any other is `_other`, none is `-`. */
const METHODS = MCP_REQUEST_METHODS

/** The `method` label value of a JSON-RPC method: itself when it is an MCP method, else `_other` (callers choose it). */
export function methodLabel(method: string): string {
  return method === '' ? '-' : METHODS.has(method) ? method : '_other'
}

/** The `tool` label value: `-` for no tool, the name cut to 64 characters otherwise. */
export function toolLabel(tool: string | undefined): string {
  return tool === undefined ? '-' : boundText(tool, 64, '')
}

/** The registry figures the metrics read (the tool registry's `stats`). */
export type RegistryStats = () => Readonly<Record<string, number>>
