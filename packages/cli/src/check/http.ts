/**
 * @module check/http
 * The HTTP side of `mcp-edge check`: the request budget of a run, one raw POST and the reading of
 * its answer (a JSON body whole, an SSE stream until every awaited id has its response), and the
 * fetch the SDK clients use, every body bounded to {@link MAX_BODY_BYTES} and every request to a
 * timeout. Node 20+ (global fetch). Never throws for anything the server does.
 */
import { createParser } from 'eventsource-parser'
import { errorText, isObject, toRawId } from './edge-rules'
import { MAX_BODY_BYTES, replyFor, type HttpAnswer } from './reply'
import { EdgeError } from 'mcp-edge-validator/rules'

/** A bound on the requests of a run: {@link take} says whether one more may be sent. */
export class RequestBudget {
  sent = 0
  spent = false
  constructor(readonly max: number) {}
  take(): boolean {
    if (this.sent >= this.max) {
      this.spent = true
      return false
    }
    this.sent++
    return true
  }
}

const SSE = 'text/event-stream'

/**
 * Reads at most {@link MAX_BODY_BYTES} bytes of a body (the rest is never read: the stream is
 * cancelled), decoding as it goes and calling `onText` per chunk until it returns true.
 * @returns the text decoded from the bytes read
 */
async function readBody(res: Response, onText: (chunk: string) => boolean): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let bytes = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const room = MAX_BODY_BYTES - bytes
      const part = value.byteLength > room ? value.subarray(0, room) : value
      bytes += part.byteLength
      const chunk = decoder.decode(part, { stream: true })
      text += chunk
      if (onText(chunk) || bytes >= MAX_BODY_BYTES) break
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  return text
}

/** The error a body stream fails with past {@link MAX_BODY_BYTES}; its message is what a handshake row shows. */
export class ReplyTooLargeError extends EdgeError {
  override readonly name = 'ReplyTooLargeError'
  override readonly code = 'EDGE_ERR_CHECK_REPLY_TOO_LARGE'
  constructor() {
    super(`the reply is larger than ${MAX_BODY_BYTES} bytes (check reads at most 1 MiB of each body)`)
  }
}

/**
 * `res` with its body stream bounded to {@link MAX_BODY_BYTES}: past it the stream fails with
 * {@link ReplyTooLargeError} and the connection is cancelled. For the SDK clients, which read a
 * JSON answer whole (`response.json()`), an error answer whole into their error message
 * (`response.text()`), and an SSE answer to its end: replies of 50 MB took the built command's peak RSS to 546-614 MB
 * before (the process's own maxRSS at exit, docs/check.md).
 */
function boundedResponse(res: Response): Response {
  const source = res.body
  if (!source) return res
  const reader = source.getReader()
  let bytes = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) return controller.close()
      bytes += value.byteLength
      if (bytes > MAX_BODY_BYTES) {
        await reader.cancel().catch(() => undefined)
        return controller.error(new ReplyTooLargeError())
      }
      controller.enqueue(value)
    },
    cancel: (reason) => reader.cancel(reason).catch(() => undefined),
  })
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
}

function pushJson(out: unknown[], data: string): void {
  try {
    const v: unknown = JSON.parse(data)
    if (Array.isArray(v)) out.push(...v)
    else out.push(v)
  } catch {
    // not JSON: left out of the messages, still in the text
  }
}

/** True when every id has a response in `messages` (or an id-less error came); for no ids, any response. */
function allAnswered(messages: unknown[], ids: readonly (string | number)[]): boolean {
  const probe: HttpAnswer = { status: 200, contentType: null, body: 'json', messages, text: '', headers: {}, ms: 0 }
  if (ids.length === 0) return messages.some((m) => isObject(m) && ('result' in m || 'error' in m))
  return ids.every((id) => replyFor(probe, id).kind !== 'none')
}

/**
 * POSTs one body and reads the answer: a JSON body whole, an SSE stream until every id in `ids`
 * has its response (then the stream is cancelled), each within `timeoutMs`.
 */
export async function postOnce(
  url: string,
  body: string,
  headers: Record<string, string>,
  ids: readonly (string | number)[],
  timeoutMs: number,
  budget: RequestBudget
): Promise<HttpAnswer> {
  const started = Date.now()
  const base: HttpAnswer = { status: null, contentType: null, body: 'empty', messages: [], text: '', headers: {}, ms: 0 }
  if (!budget.take()) return { ...base, failure: 'budget' }
  const ctrl = new AbortController()
  const timer = setTimeout(() => ctrl.abort(), timeoutMs)
  let res: Response | undefined
  try {
    res = await fetch(url, { method: 'POST', headers, body, signal: ctrl.signal, redirect: 'manual' })
    const contentType = res.headers.get('content-type')
    const out: HttpAnswer = { ...base, status: res.status, contentType, headers: Object.fromEntries(res.headers) }
    const essence = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
    if (essence === SSE) {
      const replies: Promise<unknown>[] = []
      const parser = createParser({
        onEvent: (e) => {
          const before = out.messages.length
          pushJson(out.messages, e.data)
          for (const m of out.messages.slice(before)) {
            // A request from the server (sampling, elicitation...) to a client that declared no
            // capability: answered -32601 as the SDK client does, so the server can go on.
            if (isObject(m) && typeof m.method === 'string' && 'id' in m && !('result' in m) && !('error' in m)) {
              ;(out.serverRequests ??= []).push(m.method)
              const rawId = toRawId(m.id)
              if (rawId && budget.take()) {
                const refusal = errorText(rawId, { code: -32601, message: 'Method not found' })
                replies.push(
                  fetch(url, { method: 'POST', headers, body: refusal, signal: ctrl.signal }).then(
                    (r) => r.body?.cancel(),
                    () => undefined
                  )
                )
              }
            }
          }
        },
      })
      out.text = await readBody(res, (chunk) => {
        parser.feed(chunk)
        return allAnswered(out.messages, ids)
      })
      await Promise.all(replies)
      out.body = 'sse'
    } else {
      out.text = await readBody(res, () => false)
      if (out.text.trim() === '') out.body = 'empty'
      else {
        pushJson(out.messages, out.text)
        out.body = essence === 'application/json' ? 'json' : 'other'
      }
    }
    return { ...out, ms: Date.now() - started }
  } catch {
    const status = res?.status ?? null
    return { ...base, status, contentType: res?.headers.get('content-type') ?? null, failure: ctrl.signal.aborted ? 'timeout' : 'connect', ms: Date.now() - started }
  } finally {
    clearTimeout(timer)
  }
}

/** An answer without its body text and messages: what the content-type row needs, kept per version without holding each body (up to 1 MiB) to its end. */
export function headOnly(a: HttpAnswer): HttpAnswer {
  return { ...a, text: '', messages: [] }
}

/**
 * The fetch the SDK client uses: counted against the budget and bounded by the timeout. Its GET
 * (the standalone SSE stream the client opens after `notifications/initialized`) is answered 405
 * here without being sent: check grades POST answers only, and an open stream would hold the run
 * (the SDK treats 405 as "no standalone stream", MCP Transports §Listening for Messages).
 * @param onAnswer sees each answer's status and headers before the SDK reads it (the handshake
 *   learns a 401's `WWW-Authenticate` this way: the SDK's error keeps only the status)
 */
export function sdkFetch(budget: RequestBudget, timeoutMs: number, onAnswer?: (status: number, headers: Headers) => void): typeof fetch {
  // Every body the SDK reads goes through boundedResponse.
  return async (input, init) => {
    if ((init?.method ?? 'GET').toUpperCase() === 'GET') return new Response(null, { status: 405 })
    if (!budget.take()) throw new Error('request budget spent')
    const signals = [AbortSignal.timeout(timeoutMs), ...(init?.signal ? [init.signal] : [])]
    const r = await fetch(input, { ...init, signal: AbortSignal.any(signals) })
    onAnswer?.(r.status, r.headers)
    return boundedResponse(r)
  }
}
