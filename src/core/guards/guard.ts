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
 * MCP interceptors draft, SEP-2624), and the guards that await the pins come last. Pure and
 * runtime-neutral: types only. The chains: guards/request-chain.ts, grading/reply-guards.ts (the
 * reply list; its runner guards/reply-chain.ts); the refusals: guards/denial.ts.
 */
import type { ResultFindings } from './result-findings'
import type { ProtocolVersion } from '../jsonrpc/versions'
import type { Classified } from '../request/classify'
import type { ResolvedTool } from '../validation/tool-record'
import type { PinListPull } from '../pinning/apply-pins'
import type { Exchange, Pending } from '../exchange'
import type { RequestHeaders } from '../edge-response'
import type { CallVerdict, ValidateContext } from '../validation/tools-call'
import type { AccessDenial, CallAnswer, ProtocolRefusal } from '../local-answer'
import type { Grade } from '../grade-table'

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
  /** The relayed response (message guards); absent on the edge's own tool-list pull. */
  relay?: RelayedReply
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
 * The grade a reply gets (docs/design.md §6), as the judging guards give it: `grading` sets it,
 * `output_schema` may change it; the reply grader writes it as the exchange's grade row.
 */
export interface ReplyGrade {
  grade: Grade
  /** The JSON-RPC error code of an error answer. */
  code?: number
  /** The answer is an `isError: true` result. */
  isError?: boolean
  /** What the output-schema check made of a `tools/call` result, when it says something. */
  outputSchema?: 'invalid' | 'unchecked'
}

/**
 * One response as a reply guard sees it, as the guards before it left it.
 */
export interface ReplyUnderCheck {
  /** The response's `result` (`{}` for an error response: a guard that `reads: 'result'` never sees one). */
  readonly result: Record<string, unknown>
  /** The parsed response; on the edge's own pull, `{ result }` only. */
  readonly msg: Record<string, unknown>
  /** The exact text to relay (`''` on the edge's own pull: nothing is relayed). */
  readonly text: string
  /** The grade the judging guards before this one gave (unset before `grading`). */
  readonly grade?: ReplyGrade
  /**
   * What the result checks found in `result` during this run (guards/result-findings.ts), kept so
   * that `RESULT_SECRETS` and `RESULT_CONTROL` walk a result once between them; `of` is the result
   * it was found in (a guard that changes the result makes a new object, found afresh). Read and
   * written by the result checks only.
   */
  resultFindings?: { of: Record<string, unknown>; findings: ResultFindings }
}

/**
 * The relayed response a message guard works on: the exchange and the request it answers. Absent
 * on the edge's own tool-list pull (nothing is relayed there).
 */
export interface RelayedReply {
  ex: Exchange
  p: Pending
  /**
   * This `tools/list` result is the text of one an earlier response of the same origin reply
   * carried (a batch of copies of one list): it was learned and decided with that one.
   */
  repeat: boolean
}

/**
 * A reply guard's verdict on one response:
 * - `pass`: relay as it is (the origin's bytes, when no earlier guard changed it);
 * - `change` (a guard that reads the result): relay this result instead (redaction, stripping,
 *   truncation, the tool filter); the runner writes the message as the edge writes it
 *   (`{"jsonrpc":"2.0","id":<id token>,"result":...}`), once, before the next message guard;
 * - `judge` (a judging guard that reads the message): the reply's grade, and the new text when the
 *   judgement edits the message (D11's `isError`, D10, D12 `strict`: byte-preserving edits);
 * - `rewrite` (a holding guard): relay this text (the list with the tools the pins do not approve
 *   left out, the answer without its unapproved `instructions`, or the pins' refusal);
 * - `deny`: relay an `isError: true` result in its place, classified `governance` with `code`,
 *   saying `message` (never quoting what was refused); the first `deny` ends the run.
 */
export type ReplyVerdict =
  | { kind: 'pass' }
  | { kind: 'change'; result: Record<string, unknown> }
  | { kind: 'judge'; grade: ReplyGrade; text?: string }
  | { kind: 'rewrite'; text: string }
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
 * Where a reply guard runs in the chain (the chain is sorted by stage, factory order within one):
 * - `mutate`: it may change the result the later guards see (the tool filter, redaction, stripping, truncation);
 * - `judge`: it judges the bytes the client gets (an auditing result check, grading, the output schema);
 * - `hold`: it awaits the pins and withholds what they do not approve (last: the grade is final
 *   before a hold is awaited, and the pins decide the bytes the client gets).
 */
export type ReplyStage = 'mutate' | 'judge' | 'hold'

/**
 * One reply guard. `check` must not throw and must not change what it is given in place; it is
 * synchronous unless it has to await (the pins' holds): the runner stays synchronous until a
 * guard returns a promise.
 */
export interface ReplyGuard {
  /** A short stable name (`list_filter`, `result_secrets`, `grading`, `output_schema`, `list_pins`, ...): log lines and the guard × path table name it. */
  readonly name: string
  readonly phase: 'reply'
  readonly stage: ReplyStage
  /**
   * `result`: the guard reads the parsed `result` (responses carrying an `error` pass it by) and
   * runs on every path, the edge's own tool-list pull included; `message`: the guard reads the
   * relayed message and its text ({@link ReplyGuardContext.relay}), so it runs where a reply is
   * relayed (a JSON body, each SSE event, each batch element), not on the edge's own pull.
   */
  readonly reads: 'result' | 'message'
  /** True when the guard has anything to say about responses to `method` (checked before `check`). */
  appliesTo(method: string): boolean
  /** The verdict on one response. */
  check(reply: ReplyUnderCheck, ctx: ReplyGuardContext): ReplyVerdict | Promise<ReplyVerdict>
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
