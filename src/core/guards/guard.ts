/**
 * @module core/guards/guard
 * The shape every check of the edge takes (docs/design.md §2, "The chain of guards"): a guard is
 * one unit that says which messages it applies to, its mode where it has one, and its verdict on
 * one message. Request guards run on each JSON-RPC request (a single request, each batch element)
 * before it is forwarded; reply guards run on each response the origin sends back (a JSON body,
 * each SSE event, each batch element, the edge's own tool-list pull) before it is relayed. Guards
 * are built once per configuration and run in one ordered list, first refusal wins; within the
 * reply phase the guards that change a message run before the ones that only judge it, so a
 * verdict covers the bytes the client gets (the ordering of agentgateway's guardrails and of the
 * MCP interceptors draft, SEP-2624). Pure and runtime-neutral: types only. The chains:
 * guards/request-chain.ts and guards/reply-chain.ts; the refusals: guards/denial.ts.
 */
import type { ProtocolVersion } from '../jsonrpc/versions'
import type { Classified } from '../request/classify'
import type { ResolvedTool } from '../validation/tool-record'
import type { PinListPull } from '../pinning/apply-pins'
import type { Exchange, Pending } from '../exchange'
import type { RequestHeaders } from '../edge-response'
import type { CallVerdict, ValidateContext } from '../validation/tools-call'
import type { AccessDenial, CallAnswer, ProtocolRefusal } from '../local-answer'

/** A guard's mode: `off` does nothing; `audit` logs and counts, changes nothing; the rest act. */
export type GuardMode = 'off' | 'audit' | 'enforce'

/** The phase a guard runs in. */
export type GuardPhase = 'request' | 'reply'

/**
 * What one reply guard is told about the response it checks. Names are the origin's (a virtual
 * server's merged name never reaches a guard).
 */
export interface ReplyGuardContext {
  /** `default` for `ORIGIN_URL`, else a name of `ORIGINS`. */
  originId: string
  /** The protocol version the exchange is answered in. */
  era: ProtocolVersion
  /** The method of the request this response answers (`tools/call`, `tools/list`, `initialize`, ...). */
  method: string
  /** The tool of a `tools/call` (the origin's name), when the request named one. */
  tool?: string
  /** The request id of the POST's log line (`rid`): the `correlationId` of any failure the edge writes. */
  correlationId?: string
  /**
   * Tells the edge of one finding (a secret, a hidden character, an oversized text): the caller
   * (apply-reply-guards.ts) writes one log line and counts it in `mcp_edge_result_findings_total`.
   * A finding names where and what, never the text found. Absent: findings go nowhere.
   */
  report?(finding: ReplyFinding): void
}

/**
 * One finding of a reply guard, as logged and counted: which check, what it found (a fixed
 * category name), what was done, where in the result (`content[0].text`,
 * `structuredContent.items[2].body`; never the value), and how many times there.
 */
export interface ReplyFinding {
  check: string
  category: string
  action: 'audit' | 'redact' | 'block' | 'strip' | 'truncate' | 'error'
  at: string
  count: number
}

/**
 * A reply guard's verdict on one response's `result`:
 * - `pass`: relay as it is (the origin's bytes, when no earlier guard changed it);
 * - `change`: relay this result instead (a mutating guard: redaction, stripping, truncation);
 *   `meta` members are added to the result's `_meta` by the chain, the origin's kept;
 * - `deny`: relay an `isError: true` result in its place, classified `governance` with `code`,
 *   saying `message` (never quoting what was refused).
 */
export type ReplyVerdict =
  | { kind: 'pass' }
  | { kind: 'change'; result: Record<string, unknown> }
  | {
      kind: 'deny'
      code: string
      message: string
      agentGuidance?: string
      /**
       * Answer the id with this JSON-RPC error instead of an `isError` result: for a guard that
       * stands in for a transport bound (`MAX_RESULT_TEXT_BYTES` with `OVERSIZE_RESULT=error`
       * answers -31001 as `MAX_REPLY_BYTES` does), graded `origin_error`.
       */
      rpcError?: { code: number; message: string; data?: Record<string, unknown> }
    }

/**
 * One reply guard. `changes` is true for a guard that may return `change` (it runs before every
 * guard that only judges). `check` must not throw and must not change `result` in place.
 */
export interface ReplyGuard {
  /** A short stable name (`result_secrets`, `result_control`, `oversize_result`, `output_schema`, ...): log lines and the guard × path table name it. */
  readonly name: string
  readonly phase: 'reply'
  readonly changes: boolean
  /** True when the guard has anything to say about responses to `method` (checked before `check`). */
  appliesTo(method: string): boolean
  /** The verdict on one response's `result` object (a response carrying `error` never reaches a reply guard). */
  check(result: Record<string, unknown>, ctx: ReplyGuardContext): ReplyVerdict
}

/** A JSON-RPC request as the request guards see it (request/classify.ts). */
export type GuardedRequest = Extract<Classified, { kind: 'request' }>

/**
 * What request guards add to a request they let through (forward-with-info): read by the guards
 * after them and by the pending entry the request is forwarded under.
 */
export interface ForwardInfo {
  /** The approved definition to validate a `tools/call` against (tool pinning, `enforce`). */
  pinned?: ResolvedTool
  /** The whole-list pull of a first `tools/list` page with no pin baseline yet (tool pinning, `enforce`). */
  pull?: PinListPull
}

/**
 * What one request guard is told about the request it checks. Built by the pipeline once per
 * request (a batch: once per element); `info` is what earlier guards added.
 */
export interface RequestGuardContext {
  ex: Exchange
  /** The request headers as the origin is to see them (with auth on: the origin-bound view, request-auth.ts). */
  headers: RequestHeaders
  /** The caller's private scope (validation/caller-scope.ts), `''` when the pipeline did not need it. */
  scope: string
  /** The registry as the caller sees it, with the edge's tool-list pull (call-context.ts `toolsCallContext`). */
  tools(scope: string): ValidateContext
  /** Runs argument validation inside its `mcp.validate` span (call-context.ts `traced`). */
  traced(run: () => CallVerdict | Promise<CallVerdict>): CallVerdict | Promise<CallVerdict>
  info: ForwardInfo
}

/**
 * A request guard's verdict on one request:
 * - `pass`: the next guard decides (with `info` added for the ones after it);
 * - `deny`: answer the request locally with `answer` (the guard recorded its denial, guards/denial.ts);
 * - `forward`: send it to the origin under `pending` (the last guard that applies: argument validation).
 */
export type RequestVerdict = { kind: 'pass'; info?: ForwardInfo } | { kind: 'deny'; answer: CallAnswer | ProtocolRefusal | AccessDenial } | { kind: 'forward'; pending: Pending }

/**
 * One request guard. `at: 'http'` is the token check: it runs once per HTTP request (POST, GET and
 * DELETE) at the front door, before the body is read, so it is listed in the chain but run by
 * request-auth.ts, and the message runner passes over it; `at: 'message'` guards run on each
 * JSON-RPC request, a single one or each batch element (guards/request-chain.ts). `check` is
 * synchronous unless it has to await (a remote rate limiter, a store read, a pull): the pipeline
 * decides most calls without a microtask.
 */
export interface RequestGuard {
  /** A short stable name (`token`, `rate_budget`, `tool_filter`, `tool_scopes`, `tool_pins`, `arguments`): docs and the guard × path table name it. */
  readonly name: string
  readonly phase: 'request'
  readonly at: 'http' | 'message'
  /** Its mode, where its setting has one (`TOOL_PINNING`): `audit` lets every request through. */
  readonly mode?: GuardMode
  /** True when the guard has anything to say about requests of `method` (checked before `check`). */
  appliesTo(method: string): boolean
  check(c: GuardedRequest, ctx: RequestGuardContext): RequestVerdict | Promise<RequestVerdict>
}
