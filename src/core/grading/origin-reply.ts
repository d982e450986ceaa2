/**
 * @module core/grading/origin-reply
 * What the edge reads of an origin's reply before it grades the body: which headers to relay,
 * JSON or SSE, a refusal's JSON-RPC error, and which read errors are timeouts. The origin call
 * (forwarding/origin-call.ts) and the GET/DELETE pass-through read replies the same way.
 */
import { isObject } from '../jsonrpc/jsonrpc'
import { OriginTimeoutError, type OriginReply } from '../ports'
import { isResponse } from './grade-reply'

/** Reply headers relayed to the client. */
const RELAY_REPLY = ['content-type', 'mcp-session-id', 'mcp-protocol-version', 'cache-control', 'www-authenticate', 'retry-after', 'allow']

/** The origin's reply headers to relay to the client (content type, session, version, caching, auth challenge). */
export function relayHeaders(reply: OriginReply): Record<string, string> {
  const out: Record<string, string> = {}
  for (const h of RELAY_REPLY) {
    const v = reply.headers[h]
    if (v !== undefined) out[h] = v
  }
  return out
}

/** True when the origin answered with an SSE stream (`text/event-stream`). */
export function isSse(reply: OriginReply): boolean {
  return (reply.headers['content-type'] ?? '').toLowerCase().includes('text/event-stream')
}

/** True when the origin's reply says it is JSON. */
export function isJson(reply: OriginReply): boolean {
  return (reply.headers['content-type'] ?? '').toLowerCase().includes('json')
}

/** Only the origin's `mcp-session-id` header, when it sent one. */
export function relaySessionOnly(reply: OriginReply): Record<string, string> {
  const sid = reply.headers['mcp-session-id']
  return sid ? { 'mcp-session-id': sid } : {}
}

/**
 * A non-2xx origin answer whose body is one JSON-RPC error object (e.g. 400 -32000 "Mcp-Session-Id
 * header is required", 404 -32001 "Session not found", 2026-07-28 400 -32020..-32022): its text
 * and code. Null for anything else (HTML, empty, not JSON-RPC); the body is consumed either way.
 */
export async function readRefusal(reply: OriginReply): Promise<{ text: string; code: number; msg: Record<string, unknown> } | null> {
  let text = ''
  try {
    if (isJson(reply)) text = await reply.text()
    else reply.discard()
  } catch {
    return null
  }
  let msg: unknown
  try {
    msg = text ? JSON.parse(text) : undefined
  } catch {
    return null
  }
  if (!isResponse(msg) || !isObject(msg.error)) return null
  return { text, code: msg.error.code as number, msg }
}

/** True for the timeout errors of the origin clients (core's own, undici's body timeout by name). */
export function isTimeout(e: unknown): boolean {
  return e instanceof OriginTimeoutError || (e instanceof Error && /Timeout/i.test(e.name))
}
