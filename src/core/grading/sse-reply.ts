/**
 * @module core/grading/sse-reply
 * Stage 7-8 for an SSE reply: the origin's stream relayed event by event (sse/sse-transform.ts),
 * each response event graded per id as it passes, local answers sent first, open ids closed when
 * the stream stops. Never buffers beyond one event.
 */
import { isModern } from '../jsonrpc/versions'
import { isObject, toRawId } from '../jsonrpc/jsonrpc'
import { nestsDeeperThan, scanJsonText } from '../jsonrpc/json-scan'
import type { OriginReply } from '../ports'
import { transformSse } from '../sse/sse-transform'
import { formatEvent, isMessageEvent, type SseEvent } from '../sse/sse-event'
import { idLabel, isListen, pinBook, type Exchange } from '../exchange'
import { edgeResponse, type ByteSource, type EdgeResponse } from '../edge-response'
import { isTimeout, relayHeaders, relaySessionOnly } from './origin-reply'
import { TOKEN_EXPIRED_EVENT, watchSse } from '../sse/sse-watch'
import { respondJson } from './json-reply'
import type { ReplyGrader } from './reply-grader'

/** What makes an SSE event worth parsing (see streamReply); 2026-07-28 streams add `"id"`. */
const WATCHED = /"result"|"error"|\\u|list_changed/
const WATCHED_MODERN = /"result"|"error"|\\u|list_changed|"id"/

/** True for what the edge grades in a stream: an object with `result` or `error` (a response). */
function looksLikeResponse(v: unknown): boolean {
  return isObject(v) && ('result' in v || 'error' in v) && !('method' in v)
}

/**
 * SSE reply: graded event by event, never buffered beyond one event. Local answers go first;
 * requests, notifications (progress, logging) and non-JSON-RPC events pass through in order;
 * ids left open at the end get their answer from {@link ReplyGrader.close}. The log line is
 * written as soon as every id is graded (or when the stream stops, whichever comes first).
 */
export function streamReply(reply: OriginReply, localTexts: string[], ex: Exchange, grader: ReplyGrader, asBatch: boolean): EdgeResponse {
  const source = reply.stream()
  if (!source) return respondJson(localTexts, grader.close('end'), ex, asBatch, relaySessionOnly(reply))
  const headers = relayHeaders(reply)
  headers['content-type'] = 'text/event-stream'
  headers['cache-control'] = headers['cache-control'] ?? 'no-cache'
  // Proxies in front of the edge must not buffer the stream either (MCP 2026-07-28 Streamable HTTP).
  headers['x-accel-buffering'] = 'no'
  const head = localTexts.map((t): SseEvent => ({ data: t }))
  const body = transformSse(
    source,
    {
      // No parse for an event that cannot need a change (most of a long stream: progress and
      // log notifications), and its bytes are relayed as they came. A response must spell a
      // member name "result" or "error" literally, unless a \u escape spells it, so any escape
      // takes the full path; of the notifications only tools/list_changed concerns the edge;
      // 2026-07-28 streams are also checked for server requests (an "id" beside a method).
      watch: isModern(ex.era) ? WATCHED_MODERN : WATCHED,
      onEvent(ev) {
        if (!isMessageEvent(ev)) return undefined
        const first = ev.data.trimStart()[0]
        if (first !== '{' && first !== '[') return undefined
        // Nested past MAX_JSON_DEPTH: not parsed, not relayed; its ids stay open and get -31003 at the end.
        if (nestsDeeperThan(ev.data, ex.deps.config.maxJsonDepth)) {
          ex.drop({ id: '-', reason: 'too_deep' })
          return null
        }
        let value: unknown
        try {
          value = JSON.parse(ev.data)
        } catch {
          // Starts like JSON but does not parse (cut off by the stream's end, or garbage): never
          // relayed as a message; open ids get -31001 as after a truncated JSON reply (D9).
          grader.invalid()
          return null
        }
        let result: string | null | undefined | Promise<string | null | undefined>
        if (Array.isArray(value)) {
          const scan = scanJsonText(ev.data)
          const parts: (string | Promise<string>)[] = []
          value.forEach((m, i) => {
            const el = scan.elements[i]!
            const src = ev.data.slice(el.start, el.end)
            if (!looksLikeResponse(m)) return void parts.push(src)
            const graded = grader.message(m, src)
            if (graded !== null) parts.push(graded)
          })
          if (parts.some((t) => typeof t !== 'string')) {
            // A tools/list answer held for its tool digests (tool pinning, enforce).
            result = Promise.all(parts.map((t) => Promise.resolve(t))).then((all) => {
              const joined = `[${all.join(',')}]`
              return joined === ev.data ? undefined : joined
            })
          } else {
            result = parts.length === 0 ? null : `[${parts.join(',')}]`
            if (result === ev.data) result = undefined
          }
        } else {
          if (isObject(value) && value.method === 'notifications/tools/list_changed') {
            ex.deps.registry.invalidate(ex.target.id)
            pinBook(ex.deps).listChanged(ex.target.id)
          }
          if (isModern(ex.era) && isObject(value) && typeof value.method === 'string' && 'id' in value) {
            // 2026-07-28 servers MUST NOT send requests on a response stream (input_required
            // results replaced them): dropped and logged (docs/protocol-rules.md M4).
            const id = toRawId(value.id)
            ex.drop({ id: id ? idLabel(id) : '-', reason: 'server_request' })
            return null
          }
          if (!looksLikeResponse(value)) return undefined
          const graded = grader.message(value, ev.data)
          result = graded === null ? null : typeof graded !== 'string' ? graded.then((g) => (g === ev.data ? undefined : g)) : graded === ev.data ? undefined : graded
        }
        if (grader.done) ex.finish(200)
        return result
      },
      onEnd(reason, error) {
        if (reason === 'cancel') ex.clientClosed = !grader.done
        const tail = grader.close(reason === 'error' && isTimeout(error) ? 'timeout' : reason).map((t): SseEvent => ({ data: t }))
        ex.finish(200)
        return tail
      },
    },
    // One SSE event is bounded like a JSON reply (MAX_REPLY_BYTES, counted in characters).
    {
      idleMs: isListen(ex) ? 0 : ex.deps.config.originTimeoutMs,
      eventIdleMs: isListen(ex) ? 0 : ex.deps.config.streamIdleMs,
      maxMs: ex.deps.config.streamMaxMs,
      maxEventChars: ex.deps.config.maxReplyBytes,
    }
  )
  // A 2026-07-28 listen stream is the GET stream of that revision: like a GET stream, it ends
  // when the token it was opened with stops being accepted (pass-through.ts), else it would keep
  // delivering to an expired token until STREAM_MAX_MS.
  const until = isListen(ex) ? ex.identity?.validUntilMs : undefined
  const bounded = until !== undefined ? watchSse(body, () => {}, 0, { atMs: until, event: TOKEN_EXPIRED_EVENT }) : body
  const withHead = head.length ? prepend(head, bounded) : bounded
  ex.streamingAt = performance.now()
  return edgeResponse(withHead, reply.status, headers)
}

/** `events` as one chunk, then `body`. */
function prepend(events: SseEvent[], body: ByteSource): ByteSource {
  let first: Uint8Array | undefined = new TextEncoder().encode(events.map(formatEvent).join(''))
  return {
    read() {
      if (first === undefined) return body.read()
      const value = first
      first = undefined
      return Promise.resolve({ done: false, value })
    },
    cancel: (reason) => body.cancel(reason),
  }
}
