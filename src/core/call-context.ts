/**
 * @module core/call-context
 * What stage 5 (tools/call validation) needs around one call: the registry as one caller sees it
 * ({@link toolsCallContext}: its scope, then public, and a tool-list pull with its authorization)
 * and the `mcp.validate` span ({@link traced}). Kept apart from the pipeline, which only chains the stages.
 */
import type { Classified } from './request/classify'
import type { CallVerdict } from './validation/tools-call'
import { pullToolList, type PulledToolList } from './forwarding/tool-list-pull'
import type { EdgeDeps, Exchange, OriginTarget } from './exchange'
import type { ProtocolVersion } from './jsonrpc/versions'
import type { RequestHeaders } from './edge-response'
import { boundText } from './jsonrpc/bound-text'
import { replyChain } from './grading/reply-guards'
import { runReplyGuards, type ReplyChainOutcome } from './guards/reply-chain'
import { recordDenial } from './guards/denial'
import { requestIdOf } from './observe/request-id'
import { PullError } from './errors'

/**
 * Stage 5's view of the registry for one caller: its scope (own private list, then public) and a
 * pull of the origin's tool list with the caller's authorization (bounded by ORIGIN_TIMEOUT_MS,
 * TOOL_LIST_TIMEOUT_MS and MAX_REPLY_BYTES).
 */
export function toolsCallContext(ex: Exchange, headers: RequestHeaders, scope: string) {
  const { deps, target, era } = ex
  // With auth on these are the origin-bound headers: `authorization` is ORIGIN_AUTHORIZATION (request-auth.ts).
  const authorization = headers.get('authorization')
  return {
    registry: deps.registry,
    originId: target.id,
    scope,
    era,
    config: deps.config,
    ...(ex.requestId !== undefined ? { requestId: ex.requestId } : {}),
    pull: () => pullOriginTools(deps, target, era, authorization),
  }
}

/**
 * The `Authorization` the edge sends to an origin on its own behalf (its tool-list pull from the
 * admin API, the `/readyz` probe): ORIGIN_AUTHORIZATION with auth on, else none (with auth off no
 * credential of the edge's own is configured; ORIGIN_AUTHORIZATION needs AUTH_ISSUER).
 * @returns the header value (a secret: never logged nor answered), or null
 */
export function edgeOriginCredential(deps: EdgeDeps): string | null {
  return deps.auth?.originAuthorization ?? null
}

/**
 * The edge's own tool-list pull of one origin (D7; forwarding/tool-list-pull.ts), the one way the
 * edge asks an origin for its tools, whoever asks (a call's refresh, the admin API's refresh):
 * bounded by ORIGIN_TIMEOUT_MS, TOOL_LIST_TIMEOUT_MS, MAX_REPLY_BYTES and MAX_JSON_DEPTH, sent with
 * `authorization`, and through the reply chain's guards that read a result (the tool filter's
 * `list_filter` first: the edge never learns a hidden tool).
 * @param authorization the `Authorization` to send: the caller's with auth off, ORIGIN_AUTHORIZATION
 *   with auth on; null: none
 * @throws what {@link pullToolList} throws
 */
export function pullOriginTools(deps: EdgeDeps, target: OriginTarget, era: ProtocolVersion, authorization: string | null): Promise<PulledToolList> {
  return pullToolList({
    client: deps.origin,
    url: target.url,
    era,
    headers: authorization ? { authorization } : {},
    timeoutMs: deps.config.originTimeoutMs,
    deadlineMs: deps.config.toolListTimeoutMs,
    maxReplyBytes: deps.config.maxReplyBytes,
    maxJsonDepth: deps.config.maxJsonDepth,
  }).then((r) => guardedList(deps, target, r))
}

/**
 * The reply chain (grading/reply-guards.ts) on the edge's own pull, as on a relayed `tools/list`:
 * the same runner for method `tools/list`, where the guards that read the result run (the tool
 * filter first: the edge never learns a hidden tool); grading and the pins' holds read a relayed
 * message, and the pull relays none. A reply guard's refusal fails the pull (`PullError`
 * `refused`; callers fail open, D16), recorded as a denial.
 */
function guardedList(deps: EdgeDeps, target: OriginTarget, r: PulledToolList): PulledToolList | Promise<PulledToolList> {
  const done = (out: ReplyChainOutcome): PulledToolList => {
    if (out.kind === 'deny') {
      recordDenial(deps, requestIdOf(undefined), target.id, { reason: out.verdict.code, method: 'tools/list', guard: out.guard })
      throw new PullError('refused')
    }
    return { ...r, tools: Array.isArray(out.result.tools) ? out.result.tools : r.tools }
  }
  const out = runReplyGuards(replyChain(deps.config), { msg: { result: { tools: r.tools } }, text: '' }, { originId: target.id, era: r.era, method: 'tools/list' })
  return out instanceof Promise ? out.then(done) : done(out)
}

/**
 * Runs stage 5's validation of one tools/call inside an `mcp.validate` span (a child of the
 * POST's span) when a tracer is configured; attributes: `gen_ai.tool.name`, the verdict
 * (`mcp_edge.verdict`: valid, rejected, unvalidated) and the JSON-RPC error code of a rejection.
 */
export function traced(ex: Exchange, c: Extract<Classified, { kind: 'request' }>, run: () => CallVerdict | Promise<CallVerdict>): CallVerdict | Promise<CallVerdict> {
  const span = ex.span && ex.deps.tracer ? ex.deps.tracer.start('mcp.validate', ex.span, 'internal') : undefined
  if (!span) return run()
  const done = (v: CallVerdict): CallVerdict => {
    if (span.recording) {
      const a: Record<string, string | number | boolean> = {
        'mcp.method.name': c.method,
        'mcp_edge.verdict': v.kind === 'call' ? 'rejected' : v.unvalidated ? 'unvalidated' : 'valid',
      }
      if (typeof c.params?.name === 'string') a['gen_ai.tool.name'] = boundText(c.params.name, 64, '')
      if (v.kind === 'call' && v.code !== undefined) a['rpc.jsonrpc.error_code'] = v.code
      span.setAttributes(a)
    }
    span.end()
    return v
  }
  let v: CallVerdict | Promise<CallVerdict>
  try {
    v = run()
  } catch (e) {
    span.end()
    throw e
  }
  return v instanceof Promise ? v.then(done, (e: unknown) => (span.end(), Promise.reject(e))) : done(v)
}
