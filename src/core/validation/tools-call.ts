/**
 * @module core/validation/tools-call
 * Stage 5: a `tools/call` request -> forward it, or answer it locally. Reads schemas through the
 * {@link ToolRegistry}; never throws.
 *
 * - malformed params (no `name`, `name` not a string, `arguments` not an object): -32602 in every
 *   era (MCP tools "Error Handling": protocol errors; docs/design.md D3). Missing `arguments` is `{}`.
 * - unknown tool: one single-flight refresh of the origin's list, then -32602 (D7), unless
 *   `UNKNOWN_TOOL=forward`; a failed refresh fails open (D16), or -32603 with `ON_SCHEMA_ERROR=reject`.
 * - arguments failing `inputSchema`: -32602 up to 2025-06-18, an `isError: true` result from
 *   2025-11-25 (SEP-1303), `resultType: "complete"` added for 2026-07-28; `INVALID_ARGS` overrides.
 * - no usable schema: forwarded and graded `unvalidated` (D8), or -32603 with `ON_SCHEMA_ERROR=reject`.
 * - a stale schema (past its TTL, or after `notifications/tools/list_changed`): the list is
 *   refreshed first (single-flight); if that fails, the stale copy is used.
 */
import { appendEdgeFailure } from '../jsonrpc/edge-failure'
import type { Config } from '../config'
import { invalidArgsAsToolError, isModern, type ProtocolVersion } from '../jsonrpc/versions'
import { ErrorCode, errorText, isObject, responseText, type RawId } from '../jsonrpc/jsonrpc'
import type { ValidationIssue } from '../ports'
import { invalidArgumentsMessage } from './error-message'
import type { ValidationCost } from './schema-portability'
import { estimateCallNs, type CallCostPlan } from './call-cost'
import type { CallAnswer } from '../local-answer'
import { StoreUnavailableError, type ToolListPuller, type ToolRegistry } from './tool-registry'
import type { ResolvedTool } from './tool-record'
import { boundText } from '../jsonrpc/bound-text'
import { MAX_TOOL_NAME } from './tool-store'

/** Where and for whom a call is validated. */
export interface ValidateContext {
  registry: ToolRegistry
  originId: string
  scope: string
  era: ProtocolVersion
  config: Pick<Config, 'invalidArgs' | 'unknownTool' | 'onSchemaError' | 'schemaRecheckMs'> & Partial<Pick<Config, 'validationBudgetMs'>>
  pull: ToolListPuller
  /**
   * Length of the call's JSON-RPC message text in UTF-16 units (the parsed request's span; it
   * holds `arguments`, so it bounds their text): the size the validation budget is estimated on.
   */
  textChars?: number
  /** The POST's request id: an isError answer carries it as its classification's `correlationId` (jsonrpc/edge-failure.ts). */
  requestId?: string
}

/** The verdict on one call: forward it (maybe unvalidated) or answer it locally ({@link CallAnswer}). */
export type CallVerdict = { kind: 'forward'; tool: string; unvalidated: boolean; resolved?: ResolvedTool } | CallAnswer

/**
 * The D7 answer for a tool the origin does not list: -32602 naming it (cut to 64 characters), the
 * same in every era. Also the answer to a call of a tool `TOOLS_ALLOW` / `TOOLS_DENY` hide
 * (guards/request/tool-filter.ts), so a hidden tool and a missing one look the same.
 */
export function unknownToolAnswer(id: RawId, name: string): CallAnswer {
  const text = errorText(id, {
    code: ErrorCode.InvalidParams,
    message: `Unknown tool: "${boundText(name)}". Call tools/list to see the tools this server offers.`,
    data: { tool: boundText(name) },
  })
  return { kind: 'call', id, tool: name, code: ErrorCode.InvalidParams, text, unknownTool: true }
}

/** ON_SCHEMA_ERROR=reject: the call cannot be validated (-32603 naming the tool and a safe reason). */
function cannotValidate(id: RawId, name: string, reason: string): CallVerdict {
  return {
    kind: 'call',
    id,
    tool: name,
    code: ErrorCode.InternalError,
    text: errorText(id, { code: ErrorCode.InternalError, message: `Cannot validate tool "${boundText(name)}": ${reason}.`, data: { source: 'edge', tool: boundText(name) } }),
  }
}

/** A local -32602 answer (JSON-RPC 2.0 §5.1; MCP tools "Error Handling": protocol errors). */
function invalidParamsAnswer(id: RawId, message: string, tool?: string): CallVerdict {
  return {
    kind: 'call',
    id,
    ...(tool !== undefined ? { tool } : {}),
    code: ErrorCode.InvalidParams,
    text: errorText(id, { code: ErrorCode.InvalidParams, message }),
  }
}

/**
 * Checks one `tools/call`.
 * @param id the request id (echoed in a local answer)
 * @param params the request's `params` (already known to be an object or absent)
 * @param textChars the request message's text length (UTF-16 units), for the validation budget ({@link ValidateContext.textChars})
 * @param pinned the approved definition to validate against instead of the registry's copy (tool
 *   pinning, `enforce`: only the approved inputSchema counts); a rejection is then never rechecked
 *   against a fresh list
 * @returns the verdict; a promise of it only when the tool has to be read from KV or pulled
 *   from the origin (a fresh tool in memory is checked synchronously)
 */
export function validateToolsCall(
  id: RawId,
  params: Record<string, unknown> | undefined,
  ctx: ValidateContext,
  textChars?: number,
  pinned?: ResolvedTool
): CallVerdict | Promise<CallVerdict> {
  // The budget's size travels as an argument, not in a copy of `ctx` (one spread per call showed in a batch's profile).
  const chars = textChars ?? ctx.textChars
  if (!params) return invalidParamsAnswer(id, 'Invalid params: tools/call needs params with a tool name')
  if (typeof params.name !== 'string' || params.name === '') return invalidParamsAnswer(id, 'Invalid params: params.name must be the tool name (a string)')
  const name = params.name
  if ('arguments' in params && !isObject(params.arguments)) return invalidParamsAnswer(id, `Invalid params: arguments for tool "${boundText(name)}" must be an object`, name)
  const args = (params.arguments as Record<string, unknown> | undefined) ?? {}
  if (pinned) return checkWithTool(id, name, args, pinned, ctx, isObject(params.task), chars, true)
  // A fresh tool already in memory is checked without a single await (most calls).
  const held = name.length > MAX_TOOL_NAME ? undefined : ctx.registry.cached(ctx.originId, ctx.scope, name)
  if (held && !held.stale) return checkWithTool(id, name, args, held, ctx, isObject(params.task), chars)
  return checkWithLookup(id, name, args, ctx, isObject(params.task), chars)
}

async function checkWithLookup(
  id: RawId,
  name: string,
  args: Record<string, unknown>,
  ctx: ValidateContext,
  taskAugmented: boolean,
  chars: number | undefined
): Promise<CallVerdict> {
  try {
    return await checkArguments(id, name, args, ctx, taskAugmented, chars)
  } catch (e) {
    if (!(e instanceof StoreUnavailableError)) throw e
    // D8: no schema can be read; fail open, or refuse with ON_SCHEMA_ERROR=reject.
    return ctx.config.onSchemaError === 'reject'
      ? {
          kind: 'call',
          id,
          tool: name,
          code: ErrorCode.InternalError,
          text: errorText(id, {
            code: ErrorCode.InternalError,
            message: `Cannot validate tool "${boundText(name)}": the tool schema store is unavailable.`,
            data: { source: 'edge', tool: boundText(name) },
          }),
        }
      : { kind: 'forward', tool: name, unvalidated: true }
  }
}

/** The schema part of {@link validateToolsCall}. Throws StoreUnavailableError when KV fails. */
async function checkArguments(
  id: RawId,
  name: string,
  args: Record<string, unknown>,
  ctx: ValidateContext,
  taskAugmented: boolean,
  chars: number | undefined
): Promise<CallVerdict> {
  // Longer than any tool name MCP allows (2025-11-25 tools: names SHOULD be 1-128 characters):
  // never looked up, cached or pulled for, so junk names cannot grow memory or the KV key space.
  if (name.length > MAX_TOOL_NAME) return ctx.config.unknownTool === 'forward' ? { kind: 'forward', tool: name, unvalidated: true } : unknownToolAnswer(id, name)
  let tool = await ctx.registry.lookup(ctx.originId, ctx.scope, name)
  if (tool?.stale) {
    // Past its TTL, or the origin said list_changed: refresh first (single-flight). When the pull
    // fails, the stale copy still validates (MCP 2026-07-28 caching: keep a stale copy for validation).
    if (await ctx.registry.refresh(ctx.originId, ctx.scope, ctx.pull)) tool = await ctx.registry.lookup(ctx.originId, ctx.scope, name)
  }
  if (!tool) {
    const refreshed = await ctx.registry.refresh(ctx.originId, ctx.scope, ctx.pull)
    // D16: the pull failed; fail open like D8, or refuse with ON_SCHEMA_ERROR=reject.
    if (!refreshed)
      return ctx.config.onSchemaError === 'reject'
        ? cannotValidate(id, name, 'its schema could not be fetched from the tool server')
        : { kind: 'forward', tool: name, unvalidated: true }
    tool = await ctx.registry.lookup(ctx.originId, ctx.scope, name)
    if (!tool) {
      if (ctx.config.unknownTool === 'forward') return { kind: 'forward', tool: name, unvalidated: true }
      return unknownToolAnswer(id, name)
    }
  }
  return checkWithTool(id, name, args, tool, ctx, taskAugmented, chars)
}

/**
 * No false reds: the edge is about to reject a call with a schema that may be out of date
 * ({@link ToolRegistry.needsRecheck}). The tool list is refreshed once (single-flight and within
 * the refresh rate limit and budget) and the call is judged again with what the origin says now;
 * it is rejected only if the fresh schema still rejects it. A rejection is the edge's word against
 * the origin's: after an origin loosened a limit (16 -> 30), the old schema had refused
 * now-valid calls for up to SCHEMA_TTL_S, across restarts too (docs/reliability.md). A failed or
 * rate-limited refresh keeps the copy held (the MCP 2026-07-28 caching rule: a stale copy still validates).
 */
async function recheckBeforeRejecting(
  id: RawId,
  name: string,
  args: Record<string, unknown>,
  ctx: ValidateContext,
  taskAugmented: boolean,
  held: ResolvedTool,
  chars: number | undefined
): Promise<CallVerdict> {
  let tool: ResolvedTool | null = held
  try {
    if (await ctx.registry.refresh(ctx.originId, ctx.scope, ctx.pull)) tool = await ctx.registry.lookup(ctx.originId, ctx.scope, name)
  } catch (e) {
    if (!(e instanceof StoreUnavailableError)) throw e
  }
  if (!tool) return ctx.config.unknownTool === 'forward' ? { kind: 'forward', tool: name, unvalidated: true } : unknownToolAnswer(id, name)
  return checkWithTool(id, name, args, tool, ctx, taskAugmented, chars, true)
}

/**
 * Stage 5 with the tool in hand: validate `args` against its schema. No I/O, except when a
 * rejection needs a fresh schema first ({@link recheckBeforeRejecting}); `rechecked` says that was done.
 */
function checkWithTool(
  id: RawId,
  name: string,
  args: Record<string, unknown>,
  tool: ResolvedTool,
  ctx: ValidateContext,
  taskAugmented: boolean,
  chars: number | undefined,
  rechecked = false
): CallVerdict | Promise<CallVerdict> {
  if (!tool.validate) {
    if (ctx.config.onSchemaError === 'reject') return cannotValidate(id, name, tool.unusable ?? 'no usable schema')
    return { kind: 'forward', tool: name, unvalidated: true }
  }
  const over = overBudget(tool, ctx, chars, args)
  if (over !== null) return invalidArgsAnswer(id, name, ctx, taskAugmented, over, 'validation_budget')
  let issues
  try {
    issues = tool.validate(args)
  } catch {
    // An engine that fails at validation time (e.g. an unresolvable $ref met late) = unusable (D8).
    return ctx.config.onSchemaError === 'reject' ? cannotValidate(id, name, 'its inputSchema could not be applied') : { kind: 'forward', tool: name, unvalidated: true }
  }
  if (!issues) return { kind: 'forward', tool: name, unvalidated: false, resolved: tool }
  if (!rechecked && ctx.registry.needsRecheck(tool, ctx.config.schemaRecheckMs)) return recheckBeforeRejecting(id, name, args, ctx, taskAugmented, tool, chars)

  return invalidArgsAnswer(id, name, ctx, taskAugmented, (form) => rejectionBody(tool, name, issues, form), 'invalid_arguments')
}

type AnswerForm = 'error' | 'result' | 'result-modern'

/**
 * The era's answer to invalid arguments: -32602, or an isError result (see the module comment); `body` gives the JSON without the id.
 * An isError result carries the edge's classification `{ class: "capability", code, correlationId, agentGuidance }`
 * (jsonrpc/edge-failure.ts), `code` the ToolFailure draft's `invalid_input` for arguments that fail
 * the schema, `validation_budget` for arguments too costly to check.
 */
function invalidArgsAnswer(
  id: RawId,
  name: string,
  ctx: ValidateContext,
  taskAugmented: boolean,
  body: (form: AnswerForm) => string,
  code: 'invalid_arguments' | 'validation_budget'
): CallVerdict {
  // A task-augmented call (params.task, MCP 2025-11-25 tasks) expects a CreateTaskResult, which an
  // isError CallToolResult is not: a JSON-RPC -32602 is the answer every client can read there.
  const asToolError = ctx.config.invalidArgs === 'tool-error' || (ctx.config.invalidArgs === 'auto' && invalidArgsAsToolError(ctx.era) && !taskAugmented)
  const form = asToolError ? (isModern(ctx.era) ? 'result-modern' : 'result') : 'error'
  if (asToolError) {
    const result =
      ctx.requestId === undefined
        ? body(form)
        : appendEdgeFailure(body(form), {
            class: 'capability',
            code: code === 'invalid_arguments' ? 'invalid_input' : code,
            correlationId: ctx.requestId,
            agentGuidance:
              code === 'invalid_arguments' ? "Fix the arguments to match the tool's inputSchema, then call again." : 'Send smaller or simpler arguments, then call again.',
          })
    return { kind: 'call', id, tool: name, isError: true, text: responseText(id, 'result', result) }
  }
  return { kind: 'call', id, tool: name, code: ErrorCode.InvalidParams, text: responseText(id, 'error', body(form)) }
}

/** Default of `VALIDATION_BUDGET_MS`. */
export const DEFAULT_VALIDATION_BUDGET_MS = 50

/**
 * Decided before validating, so the bound holds by construction: the CPU time one validation of
 * this call can take is estimated, and a call past `VALIDATION_BUDGET_MS` is not validated. It is
 * not forwarded unvalidated either (padding the arguments would skip validation): it is answered
 * as invalid arguments, with a text that names the size and the setting, never a value.
 *
 * Two estimates, each an upper bound: the schema's static figure ({@link ResolvedTool.cost},
 * every character of the message at the costliest path's rate; no work per call), and, only when
 * that one is over, the walk of the arguments along the tool's plan ({@link ResolvedTool.costPlan},
 * call-cost.ts: each value present at the rate of the keywords that check it). The smaller decides.
 * @returns the answer body per form, or null when the call is within the budget
 */
function overBudget(tool: ResolvedTool, ctx: ValidateContext, chars: number | undefined, args: Record<string, unknown>): ((form: AnswerForm) => string) | null {
  if (!tool.cost || chars === undefined) return null
  const budgetMs = ctx.config.validationBudgetMs ?? DEFAULT_VALIDATION_BUDGET_MS
  const est = callEstimateMs(tool.cost, tool.costPlan, chars, args, budgetMs)
  if (est.ms <= budgetMs) return null
  const atLeast = est.floor ? 'at least ' : ''
  const estimateMs = est.ms
  const name = boundText(tool.record.name)
  const text =
    `Invalid arguments for tool "${name}": arguments of ${chars} characters are too large for this tool's schema to be checked within the edge's validation budget ` +
    `(estimated ${atLeast}${Math.ceil(estimateMs)} ms of CPU, budget ${budgetMs} ms). Send smaller arguments, or an operator can raise VALIDATION_BUDGET_MS.`
  return (form) => {
    if (form === 'error') return JSON.stringify({ code: ErrorCode.InvalidParams, message: text, data: { tool: name, reason: 'validation-budget', budgetMs } })
    const result: Record<string, unknown> = { content: [{ type: 'text', text }], isError: true }
    if (form === 'result-modern') result.resultType = 'complete'
    return JSON.stringify(result)
  }
}

/**
 * The estimate the validation budget decides on, in ms: the schema's static figure
 * ({@link estimateValidationMs}) when it is within `budgetMs` (no work per call), otherwise the
 * smaller of it and the walk of the arguments along the plan (call-cost.ts {@link estimateCallNs}).
 * Both are upper bounds of the CPU time of one validation by either engine.
 * @param cost the schema's static figure
 * @param plan the schema's call-time plan, or null/undefined when it has none (the static figure alone decides)
 * @param chars the length of the JSON text that holds the arguments (UTF-16 units)
 * @param args the parsed arguments
 * @param budgetMs the budget; the walk stops once past it
 * @returns `ms`, and `floor: true` when `ms` is where the walk stopped (the estimate is at least that)
 */
export function callEstimateMs(cost: ValidationCost, plan: CallCostPlan | null | undefined, chars: number, args: unknown, budgetMs: number): { ms: number; floor: boolean } {
  const staticMs = estimateValidationMs(cost, chars)
  if (staticMs <= budgetMs || !plan) return { ms: staticMs, floor: false }
  const walkedMs = estimateCallNs(plan, args, budgetMs * 1e6) / 1e6
  return walkedMs < staticMs ? { ms: walkedMs, floor: walkedMs > budgetMs } : { ms: staticMs, floor: false }
}

/**
 * The estimated CPU time of one validation, in ms: `fixedNs + chars * perCharNs`
 * (schema-portability.ts {@link ValidationCost}).
 * @param chars the length of the JSON text that holds the arguments (UTF-16 units)
 */
export function estimateValidationMs(cost: ValidationCost, chars: number): number {
  return (cost.fixedNs + chars * cost.perCharNs) / 1e6
}

/** Rejection bodies remembered per tool (at most this many issue lists each, oldest dropped first). */
const REJECTIONS_PER_TOOL = 32

/**
 * The JSON of the `error` (-32602 with `data.issues`) or `result` (isError CallToolResult) that
 * answers invalid arguments, without the id. The message depends only on the tool's schema and
 * the issue list (never on the rejected values), so it is built once per tool and issue list and
 * remembered on the compiled tool (`ResolvedTool.rejections`): an agent repeating the same mistake is the common case, and
 * building the message was most of the edge's CPU per rejected call (a CPU profile of `npm run bench`, docs/performance.md).
 */
function rejectionBody(tool: ResolvedTool, name: string, issues: ValidationIssue[], form: AnswerForm): string {
  let key = form
  for (const i of issues) key += `\n${i.path}\t${i.keyword}\t${i.schemaPath}\t${i.property ?? ''}`
  let memo = tool.rejections
  const hit = memo?.get(key)
  if (hit !== undefined) return hit
  const msg = invalidArgumentsMessage(name, issues, tool.messageSchema ?? tool.record.inputSchema)
  let body: string
  if (form === 'error') body = JSON.stringify({ code: ErrorCode.InvalidParams, message: msg.text, data: { tool: boundText(name), issues: msg.issues } })
  else {
    const result: Record<string, unknown> = { content: [{ type: 'text', text: msg.text }], isError: true }
    if (form === 'result-modern') result.resultType = 'complete'
    body = JSON.stringify(result)
  }
  if (!memo) tool.rejections = memo = new Map()
  memo.set(key, body)
  if (memo.size > REJECTIONS_PER_TOOL) memo.delete(memo.keys().next().value as string)
  return body
}

/**
 * The tool's record for checks that run before argument validation (2026-07-28 `Mcp-Param-*`
 * headers): memory or KV, with one single-flight refresh when it is not known. Null when the tool
 * is unknown, the pull failed or the store is down (those cases are answered by
 * {@link validateToolsCall}).
 */
export async function findTool(ctx: ValidateContext, name: string): Promise<ResolvedTool | null> {
  try {
    const tool = await ctx.registry.lookup(ctx.originId, ctx.scope, name)
    if (tool || !(await ctx.registry.refresh(ctx.originId, ctx.scope, ctx.pull))) return tool
    return await ctx.registry.lookup(ctx.originId, ctx.scope, name)
  } catch (e) {
    if (e instanceof StoreUnavailableError) return null
    throw e
  }
}
