/**
 * @module core/grading/reply-grader
 * Stage 7: the messages of one origin reply graded against the ids the edge forwarded (JSON body
 * or SSE events alike), each id answered exactly once; what is left open gets its gateway error.
 */
import { ErrorCode, errorText, isObject, toRawId } from '../jsonrpc/jsonrpc'
import { memberText, scanJsonText } from '../jsonrpc/json-scan'
import { isResponse } from './grade-reply'
import type { GradeRow } from '../grade-table'
import type { SseEndReason } from '../sse/sse-event'
import { brokeOutputSchema, onToolsListReply } from './learn-from-replies'
import { idLabel, originEras, type Exchange, type Pending } from '../exchange'
import { gatewayError } from '../local-answer'
import { isKnownVersion, isModern } from '../jsonrpc/versions'
import { resultValueStart } from './sliced-batch'
import { applyReplyChain, type JudgedReply } from '../guards/apply-reply-guards'
import { replyChain } from './reply-guards'

/**
 * Grades the messages of one origin reply against the open ids of an {@link Exchange} (D9, D10,
 * D11, docs/design.md §6). Each forwarded id is answered exactly once: the first response for it
 * wins; repeated ids, ids never forwarded and messages that are not JSON-RPC are dropped and
 * logged; an error with `"id": null` is kept aside and given to the ids still open at the end.
 */
export class ReplyGrader {
  private orphan: { msg: Record<string, unknown>; source: string } | null = null
  private sawInvalid = false
  private open: number
  /**
   * The `tools/list` results already handled in this reply, by {@link listKey}: a batch of 100
   * `tools/list` is 100 copies of one list, which is learned, digested and (audit) decided once.
   */
  private readonly lists = new Map<string, Record<string, unknown>>()

  constructor(private readonly ex: Exchange) {
    let open = 0
    for (const p of ex.pending.values()) if (!p.answered) open++
    this.open = open
  }

  /** The reply held something that is not a JSON-RPC message (open ids will get -31001 at the end). */
  invalid(): void {
    this.sawInvalid = true
    this.ex.drop({ id: '-', reason: 'invalid' })
  }

  /** True when every forwarded id has its answer. */
  get done(): boolean {
    return this.open === 0
  }

  /**
   * One message of the reply (a parsed value and its exact text).
   * @returns the text to relay (the origin's, or the edge's rewrite), a promise of it for a
   *   tools/list answer held for its tool digests or an initialize / server/discover answer held
   *   for its instructions' digest (tool pinning, `enforce`), or null when dropped
   */
  message(msg: unknown, source: string): string | Promise<string> | null {
    const ex = this.ex
    if (!isResponse(msg)) {
      this.sawInvalid = true
      ex.drop({ id: '-', reason: 'invalid' })
      return null
    }
    if (msg.id === null) {
      if (isObject(msg.error)) this.orphan ??= { msg, source }
      else this.sawInvalid = true
      ex.drop({ id: 'null', reason: isObject(msg.error) ? 'no_id' : 'invalid' })
      return null
    }
    const token = typeof msg.id === 'number' && !Number.isSafeInteger(msg.id) ? memberText(source, scanJsonText(source).elements[0], 'id') : undefined
    const id = toRawId(msg.id, token)
    if (!id) {
      this.sawInvalid = true
      ex.drop({ id: '-', reason: 'invalid' })
      return null
    }
    const p = ex.pending.get(id.key)
    if (!p || p.answered) {
      ex.drop({ id: idLabel(id), reason: p ? 'repeated' : 'unknown_id' })
      return null
    }
    return this.answer(p, msg, source)
  }

  private answer(p: Pending, msg: Record<string, unknown>, source: string, hold = true): string | Promise<string> {
    const ex = this.ex
    p.answered = true
    this.open--
    originEras(ex.deps).observe(ex.target.id, p.method, msg) // D17: learn the origin's era
    // An initialize POST is logged in the version the origin negotiated, not the one the client offered.
    if (p.method === 'initialize' && isObject(msg.result) && isKnownVersion(msg.result.protocolVersion) && !isModern(msg.result.protocolVersion))
      ex.era = msg.result.protocolVersion
    // The reply chain (grading/reply-guards.ts): the tool filter and the result checks that change
    // a result, then grading and the output schema on the bytes the client gets, then the pins' holds.
    return applyReplyChain(ex, p, replyChain(ex.deps.config), msg, source, {
      brokeSchema: (original, changed) => brokeOutputSchema(ex, p, original, changed),
      judged: (j) => this.judged(p, j),
      hold,
    })
  }

  /**
   * One response's grade is final (before any hold): its grade row; a `tools/list` result is
   * learned (once per distinct list of this reply).
   * @returns the first parse of an equal list this reply carried, for the holds to decide with
   */
  private judged(p: Pending, j: JudgedReply): Record<string, unknown> | undefined {
    const ex = this.ex
    const g = j.grade
    let row: GradeRow
    if (j.answeredBy === 'edge') {
      // A guard standing for a transport bound (MAX_RESULT_TEXT_BYTES): the edge's error, graded as a reply over MAX_REPLY_BYTES is.
      row = { id: idLabel(p.id), method: p.method, grade: g.grade, ...(g.code !== undefined ? { code: g.code } : {}), answeredBy: 'edge' }
      if (p.tool !== undefined) row.tool = p.tool
    } else {
      row = { id: idLabel(p.id), method: p.method, grade: g.grade, answeredBy: 'origin' }
      // Not a GradeRow field: the grade's log line carries it.
      if (g.outputSchema !== undefined) Object.assign(row, { outputSchema: g.outputSchema })
      if (p.tool !== undefined) row.tool = p.tool
      if (g.code !== undefined) row.code = g.code
      if (g.isError) row.isError = true
    }
    if (ex.originMs !== undefined) row.originMs = ex.originMs
    ex.row(row)
    if (j.answeredBy === 'edge' || p.method !== 'tools/list') return undefined
    // A list whose text is one this reply already carried has the values of that one: the first
    // parse stands in for it, so the digests of its tools are computed once per distinct list
    // (pinning/tool-digest.ts keeps them per list), and it is not learned again.
    const key = listKey(p, j.msg, j.text)
    const first = key === null ? undefined : this.lists.get(key)
    if (first) return { ...j.msg, result: first }
    if (key !== null) this.lists.set(key, j.msg.result as Record<string, unknown>)
    // Validation (learn-from-replies.ts): learn tools/list pages in the background.
    onToolsListReply(ex, p, j.msg)
    return undefined
  }

  /**
   * Answers every id still open when the reply is over, and returns those answers' texts:
   * the origin's id-less error when it sent one (graded `rpc_error`); otherwise a gateway error
   * (D9): -31001 after a failed stream or a reply holding non-JSON-RPC messages (`origin_error`),
   * -31002 after `ORIGIN_TIMEOUT_MS` without a byte (`origin_error`), -31003 when the reply
   * simply ended without this id (`missing`). After a client cancel the rows are written
   * (`missing`) but no text is produced.
   */
  close(reason: SseEndReason | 'invalid', originStatus?: number): string[] {
    const ex = this.ex
    const out: string[] = []
    for (const p of ex.pending.values()) {
      if (p.answered) continue
      if (this.orphan && reason !== 'cancel') {
        out.push(this.answer(p, this.orphan.msg, this.orphan.source, false) as string)
        continue
      }
      p.answered = true
      this.open--
      const code =
        reason === 'timeout'
          ? ErrorCode.OriginTimeout
          : reason === 'error' || reason === 'invalid' || (reason === 'end' && this.sawInvalid)
            ? ErrorCode.OriginUnavailable
            : ErrorCode.OriginNoAnswer
      const row: GradeRow = { id: idLabel(p.id), method: p.method, grade: code === ErrorCode.OriginNoAnswer ? 'missing' : 'origin_error', code, answeredBy: 'edge' }
      if (p.tool !== undefined) row.tool = p.tool
      if (ex.originMs !== undefined) row.originMs = ex.originMs
      ex.row(row)
      if (reason !== 'cancel') out.push(errorText(p.id, gatewayError(code, originStatus)))
    }
    return out
  }
}

/**
 * The key under which a `tools/list` response's result is the same as another's in one reply: the
 * text from its `result` value to the end of the message, prefixed by whether the request was for a
 * later page. Two responses with the same key parse to equal results (the text after the first
 * `result` member holds it and any repeat of it, which `JSON.parse` would take). Null (never shared)
 * for an error response, or when the members before `result` are not short plain values.
 */
function listKey(p: Pending, msg: Record<string, unknown>, source: string): string | null {
  if ('error' in msg || !isObject(msg.result)) return null
  const at = resultValueStart(source)
  return at < 0 ? null : (p.paged ? 'p' : 'c') + source.slice(at)
}
