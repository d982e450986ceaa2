/**
 * @module core/guards/denial
 * The one vocabulary of the edge's refusals (docs/design.md §2, "The chain of guards";
 * docs/security.md "Each denial and its answer"): every reason a guard may refuse for, the counter
 * each reason is counted in, the one function that logs and counts a denial
 * ({@link recordDenial}), and the kind of answer a refusal gets in each era
 * ({@link denialAnswerKind}). Pure and runtime-neutral.
 */
import type { EdgeDeps } from '../exchange'
import { invalidArgsAsToolError, type ProtocolVersion } from '../jsonrpc/versions'

/**
 * Every reason a guard refuses for (request guards, and the reply guards' codes that end in a denial), in the order the metrics docs list them, with the
 * counter it adds 1 to: `denials` is `mcp_edge_denials_total{reason}` with one `mcp.denied` log
 * line; `pin_blocks` is `mcp_edge_tool_pin_blocks_total{origin,reason}` (tool pinning writes its
 * own `pin.*` lines). The metric help texts and label lists are built from this table.
 */
export const DENIAL_REASONS = {
  tool_filtered: { counter: 'denials', guard: 'tool_filter' },
  rate_limited: { counter: 'denials', guard: 'rate_budget' },
  no_token: { counter: 'denials', guard: 'token' },
  invalid_token: { counter: 'denials', guard: 'token' },
  insufficient_scope: { counter: 'denials', guard: 'tool_scopes' },
  jwks_unavailable: { counter: 'denials', guard: 'token' },
  session_of_another_caller: { counter: 'denials', guard: 'virtual_session' },
  secret_in_result: { counter: 'denials', guard: 'result_secrets' },
  result_check_broke_schema: { counter: 'denials', guard: 'reply_chain' },
  changed: { counter: 'pin_blocks', guard: 'tool_pins' },
  pending: { counter: 'pin_blocks', guard: 'tool_pins' },
  unknown: { counter: 'pin_blocks', guard: 'tool_pins' },
  'pins-unavailable': { counter: 'pin_blocks', guard: 'tool_pins' },
  'malformed-list': { counter: 'pin_blocks', guard: 'tool_pins' },
  'list-omitted': { counter: 'pin_blocks', guard: 'tool_pins' },
  'instructions-held': { counter: 'pin_blocks', guard: 'tool_pins' },
} as const satisfies Record<string, { counter: 'denials' | 'pin_blocks'; guard: string }>

/** Why a guard refused: a key of {@link DENIAL_REASONS}. */
export type DenialReason = keyof typeof DENIAL_REASONS

/** The reasons counted in `counter`, in table order (the metric docs' label values). */
export function reasonsCountedIn(counter: 'denials' | 'pin_blocks'): DenialReason[] {
  return (Object.keys(DENIAL_REASONS) as DenialReason[]).filter((r) => DENIAL_REASONS[r].counter === counter)
}

/**
 * A reply guard's code (guards/guard.ts `ReplyVerdict.code`): the reason of its denial, counted in
 * `mcp_edge_denials_total` and logged like a request guard's; each reply guard names its codes.
 */
export type ReplyDenialCode = string

/**
 * One denial as its `mcp.denied` line records it, fields in the line's order after `reason`. Never
 * a token, an `Authorization` value, an argument value or a secret; names cut to 64 characters.
 * `method` is the HTTP method for a refusal of the whole HTTP request (`token`, and
 * `insufficient_scope`, whose answer is the 403 challenge of the POST) and the JSON-RPC method for
 * a refusal of one message (`rate_limited`, `tool_filtered`, reply guards).
 */
export interface Denial {
  reason: DenialReason | ReplyDenialCode
  /** The HTTP status of the answer (a batch element: the batch's, 200). */
  status?: number
  /** The token failure code of an `invalid_token` (`expired`, `wrong_audience`, ...). */
  tokenError?: string
  /** `jwks_unavailable` (and an `unknown_key` decided on held keys): the key set's URL, credentials hidden. */
  jwksUrl?: string
  /** What the last read of that key set got, e.g. `answered HTTP 500`. */
  jwksAnswered?: string
  /** The JSON-RPC id (its token, bounded) of a refused request or element. */
  id?: string
  method?: string
  /** The tool of a refused tools/call (bounded). */
  tool?: string
  /** The scopes the tool needs, space-separated. */
  scope?: string
  /** The verified caller. */
  sub?: string
  /** Further fixed fields: the budget and the wait, the fix for the operator, the reply guard's name. */
  [field: string]: unknown
}

/**
 * The one place a denial is logged and counted (see {@link DENIAL_REASONS}): a `denials` reason (and
 * every reply guard code) writes `{ level: "warn", msg: "mcp.denied", rid, origin, ...denial }` and
 * adds 1 to `mcp_edge_denials_total{reason}`; a `pin_blocks` reason adds 1 to
 * `mcp_edge_tool_pin_blocks_total{origin,reason}`.
 * @param rid the request id of the line (`X-Request-Id`, traceparent, or fresh)
 * @param origin `default` or a name of `ORIGINS`
 */
export function recordDenial(deps: Pick<EdgeDeps, 'metrics' | 'log'>, rid: string, origin: string, d: Denial): void {
  const known = Object.hasOwn(DENIAL_REASONS, d.reason) ? DENIAL_REASONS[d.reason as DenialReason] : undefined
  if (known?.counter === 'pin_blocks') {
    deps.metrics.countPinBlock?.call(deps.metrics, origin, d.reason)
    return
  }
  deps.metrics.countDenial(d.reason)
  deps.log({ level: 'warn', msg: 'mcp.denied', rid, origin, ...d })
}

/**
 * How a refusal is answered:
 * - `http`: the whole HTTP request is refused with its own status (401, 403, 429, 503) and a
 *   JSON-RPC error (id null before the body is read);
 * - `per-id-error`: a JSON-RPC error for the element's id inside the batch's 200;
 * - `rpc-error`: a JSON-RPC error for the request's id, HTTP 200;
 * - `is-error-result`: a `tools/call` result with `isError: true` (the rule of invalid arguments).
 */
export type DenialAnswerKind = 'http' | 'per-id-error' | 'rpc-error' | 'is-error-result'

/** What decides a refusal's answer besides its reason. */
export interface DenialAnswerContext {
  era: ProtocolVersion
  /** The refused request is an element of a 2025-03-26 batch. */
  batch: boolean
  /** `INVALID_ARGS` (tool pinning answers as invalid arguments are). */
  invalidArgs?: 'auto' | 'rpc-error' | 'tool-error'
  /** The tools/call is task-augmented (`params.task`): never an `isError` result. */
  taskAugmented?: boolean
  /** A refusal found in a reply (reply guards): always an `isError` result in the answer's place. */
  reply?: boolean
}

/**
 * The answer kind of a refusal per era, in one place:
 * - token reasons: `http` (the body is not read; a batch is refused whole);
 * - `session_of_another_caller`: `http`, the 404 of an unknown session (the whole request);
 * - `insufficient_scope`, `rate_limited`: `http` for a single request, `per-id-error` in a batch;
 * - `tool_filtered`, `unknown`: `rpc-error` (-32602, exactly an unknown tool's answer in every era);
 * - pin blocks of a call: as invalid arguments (`INVALID_ARGS`): `is-error-result` from 2025-11-25
 *   on unless task-augmented, else `rpc-error`;
 * - pin blocks of a list, reply guard codes: `rpc-error` for a list, `is-error-result` for a result.
 */
export function denialAnswerKind(reason: DenialReason | ReplyDenialCode, c: DenialAnswerContext): DenialAnswerKind {
  if (c.reply) return 'is-error-result'
  switch (reason) {
    case 'no_token':
    case 'invalid_token':
    case 'jwks_unavailable':
    case 'session_of_another_caller':
      return 'http'
    case 'insufficient_scope':
    case 'rate_limited':
      return c.batch ? 'per-id-error' : 'http'
    case 'changed':
    case 'pending':
    case 'pins-unavailable': {
      const asToolError = c.invalidArgs === 'tool-error' || (c.invalidArgs === 'auto' && invalidArgsAsToolError(c.era) && !c.taskAugmented)
      return asToolError ? 'is-error-result' : 'rpc-error'
    }
    default:
      return 'rpc-error'
  }
}
