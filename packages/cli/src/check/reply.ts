/**
 * @module check/reply
 * What a server answered to one HTTP request of `mcp-edge check`, and the pure readings of it:
 * the JSON-RPC response for an id, stack traces, an echoed canary, and a one-line description
 * safe to print on a terminal. Pure; never throws.
 */
import { hidesFailure, isObject } from './edge-rules'
import { safeText } from './safe-text'

/** One HTTP exchange as the runner saw it. */
export interface HttpAnswer {
  /** HTTP status, or null when no HTTP answer came (see `failure`). */
  status: number | null
  /** Why there is no (complete) answer: no connection, no answer within `--timeout`, or the request budget was spent before sending. */
  failure?: 'connect' | 'timeout' | 'budget'
  /** `Content-Type` of the answer (as sent), null when absent. */
  contentType: string | null
  /** How the body was read: nothing, one JSON text, an SSE stream, or something else. */
  body: 'empty' | 'json' | 'sse' | 'other'
  /** The JSON-RPC messages found in the body: the JSON value (an array is spread) or every SSE `data:` JSON. */
  messages: unknown[]
  /** The body text as received, decoded from at most {@link MAX_BODY_BYTES} bytes. */
  text: string
  /** Response headers (lower-case names). */
  headers: Record<string, string>
  /** Milliseconds from sending to the end of reading. */
  ms: number
  /**
   * Methods of the requests the server sent to the client on this answer's stream (sampling,
   * elicitation...). check declares no client capabilities, answers each with -32601 and lists them here.
   */
  serverRequests?: string[]
}

/**
 * Upper bound of the bytes read of each body, 1 MiB: the raw cases' answers and everything the SDK
 * clients read for the handshake; the rest is not read (the stream is cancelled).
 */
export const MAX_BODY_BYTES = 1_048_576

/** The JSON-RPC response for one request id, read from an answer. */
export type Reply =
  | { kind: 'none' }
  | { kind: 'error'; code: number | null; message: string; data: unknown; alsoResult: boolean; idless: boolean }
  | { kind: 'result'; result: unknown; isError: boolean; hidesFailure: boolean }

const sameId = (a: unknown, b: unknown) => a === b || (typeof a === 'number' && typeof b === 'number' && a === b)

/**
 * The response to `id` in `answer` (JSON-RPC 2.0 §5: matched by id). When no message carries the
 * id, an error with `id: null` or no id (JSON-RPC 2.0 §5: "could not be detected") stands for it.
 * @param id the request id sent; null for a message whose id the server cannot read (parse error)
 */
export function replyFor(answer: HttpAnswer, id: string | number | null): Reply {
  const msgs = answer.messages.filter(isObject)
  const own = id === null ? undefined : msgs.find((m) => 'id' in m && sameId(m.id, id) && ('result' in m || 'error' in m))
  const idless = msgs.find((m) => (!('id' in m) || m.id === null) && isObject(m.error))
  const m = own ?? idless
  if (!m) return { kind: 'none' }
  if (m.error !== undefined && m.error !== null) {
    const e = isObject(m.error) ? m.error : {}
    return {
      kind: 'error',
      code: typeof e.code === 'number' ? e.code : null,
      message: typeof e.message === 'string' ? e.message : '',
      data: e.data,
      alsoResult: 'result' in m,
      idless: m !== own,
    }
  }
  const result = m.result
  const isError = isObject(result) && result.isError === true
  return { kind: 'result', result, isError, hidesFailure: !isError && isObject(result) && hidesFailure(result) }
}

/** Every string inside a JSON value (member names included), depth-bounded. */
function strings(v: unknown, out: string[], depth = 0): void {
  if (depth > 64) return
  if (typeof v === 'string') out.push(v)
  else if (Array.isArray(v)) for (const x of v) strings(x, out, depth + 1)
  else if (isObject(v))
    for (const [k, x] of Object.entries(v)) {
      out.push(k)
      strings(x, out, depth + 1)
    }
}

/**
 * The texts of an answer to search: the decoded strings of its JSON-RPC responses (not of the
 * requests and notifications the server sent on the stream: those go to the client, not back to
 * the agent as the answer), else its raw body.
 */
function texts(answer: HttpAnswer): string[] {
  const out: string[] = []
  const responses = answer.messages.filter((m) => isObject(m) && ('result' in m || 'error' in m))
  for (const m of responses) strings(m, out)
  if (responses.length === 0 && answer.text) out.push(answer.text)
  return out
}

/**
 * Frames of a stack trace as runtimes print them: V8 (`at f (/app/x.js:3:7)`, `at file:///…:1:2`,
 * `node:internal/…`), Python (`Traceback (most recent call last)`, `File "x.py", line 3`), the JVM
 * (`at a.B.c(B.java:12)`), Go (`goroutine 1 [running]`), .NET (`at A.B() in C:\x.cs:line 4`).
 */
const STACK_FRAMES: readonly RegExp[] = [
  /\bat [^\n()]{1,200} \((?:file:\/\/|node:|\/|[A-Za-z]:\\)[^)\n]*:\d+:\d+\)/,
  /\bat (?:file:\/\/|node:internal\/|\/)[^\s)]*:\d+:\d+/,
  /Traceback \(most recent call last\)/,
  /File "[^"\n]+", line \d+/,
  /\bat [\w$.]+\([\w$]+\.(?:java|kt|scala):\d+\)/,
  /\bgoroutine \d+ \[/,
  /\bat [\w.<>`]+\([^)\n]*\) in [^\n]+:line \d+/,
]

/** True when the answer carries a stack trace anywhere (error message, error data, result text). */
export function hasStackTrace(answer: HttpAnswer): boolean {
  return texts(answer).some((t) => STACK_FRAMES.some((re) => re.test(t)))
}

/** True when `canary` appears in the answer's responses (any string, decoded), or in a body that is not JSON. */
export function echoes(answer: HttpAnswer, canary: string): boolean {
  return texts(answer).some((t) => t.includes(canary))
}

/**
 * `s` as one cell of the report: trimmed, every control, bidi or separator character shown as a
 * `\uXXXX` escape (./safe-text, the one sanitiser: a line feed too, so no text makes a row of its
 * own), cut to `max` characters.
 */
export function printable(s: string, max = 60): string {
  return safeText(s.trim(), max)
}

/**
 * Server text in double quotes: {@link printable}, with `"` written `\"` (not JSON.stringify, which
 * would show each escape of the sanitiser as `\\u001b`).
 */
export function quoted(s: string, max: number): string {
  return `"${printable(s, max).replaceAll('"', '\\"')}"`
}

/** The first text content of a tool result, if any. */
function firstText(result: unknown): string | undefined {
  if (!isObject(result) || !Array.isArray(result.content)) return undefined
  for (const c of result.content) if (isObject(c) && c.type === 'text' && typeof c.text === 'string') return c.text
  return undefined
}

/** The HTTP part of a description: `HTTP 200 sse`, `HTTP 400 json`, `HTTP 202 no body`. */
export function describeHttp(answer: HttpAnswer): string {
  if (answer.failure === 'budget') return 'not sent (request budget spent)'
  if (answer.failure === 'timeout') return answer.status === null ? 'no answer (timed out)' : `HTTP ${answer.status}, then timed out`
  if (answer.failure === 'connect' || answer.status === null) return 'no answer (could not connect)'
  const kind = answer.body === 'empty' ? 'no body' : answer.body === 'other' ? printable(answer.contentType ?? 'no content type', 30) : answer.body
  return `HTTP ${answer.status} ${kind}`
}

/**
 * One line saying what the server answered to request `id`, e.g.
 * `HTTP 200 sse: error -32603 "[ { "expected": "record", …"` or `HTTP 200 json: result "Forecast for undefined: 3 days"`.
 * Server text is cut and stripped of control characters (safe on a terminal).
 */
export function describeReply(answer: HttpAnswer, id: string | number | null): string {
  const http = describeHttp(answer)
  if (answer.status === null || answer.failure === 'budget') return http
  const r = replyFor(answer, id)
  switch (r.kind) {
    case 'none':
      return answer.body === 'empty' ? http : answer.messages.length ? `${http}: no response for this id` : `${http}: ${quoted(answer.text, 40)}`
    case 'error':
      return `${http}: error ${r.code ?? '(no code)'}${r.idless ? ' id null' : ''}${r.alsoResult ? ' and a result' : ''} ${quoted(r.message, 50)}`
    case 'result': {
      const t = firstText(r.result)
      const flag = r.isError ? ' isError' : ''
      return `${http}: result${flag}${t !== undefined ? ' ' + quoted(t, 50) : ''}`
    }
  }
}
