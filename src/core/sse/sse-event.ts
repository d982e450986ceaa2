/**
 * @module core/sse/sse-event
 * One Server-Sent Event as the edge handles it (WHATWG HTML "Server-sent events"), its text form,
 * and why a stream stopped. Pure.
 */

/** One SSE event. `data` lines are joined with `\n`. */
export interface SseEvent {
  id?: string
  event?: string
  data: string
}

/** Serialises one event, `data` split into one `data:` line per line. */
export function formatEvent(ev: SseEvent): string {
  let out = ''
  if (ev.id !== undefined) out += `id: ${ev.id}\n`
  if (ev.event !== undefined) out += `event: ${ev.event}\n`
  for (const line of ev.data.split('\n')) out += `data: ${line}\n`
  return out + '\n'
}

/** Why the origin's stream stopped: it ended, it failed, it went idle, or the client cancelled. */
export type SseEndReason = 'end' | 'error' | 'timeout' | 'cancel'

/** True when an SSE event carries a JSON-RPC message (no event name, or `message`: MCP Streamable HTTP). */
export function isMessageEvent(ev: SseEvent): boolean {
  return ev.event === undefined || ev.event === 'message'
}
