/**
 * The headers of an MCP POST over Streamable HTTP, in one place: a JSON-RPC body, an Accept of
 * both JSON and an SSE stream (the transport requires both), and the protocol version header.
 */

/** The protocol version most tests speak (the SDK clients' default when they were written). */
export const DEFAULT_VERSION = '2025-06-18'

/** Content type and Accept of every MCP POST, without a protocol version (a first `initialize`, or a 2025-03-26 client). */
export const POST_HEADERS: Readonly<Record<string, string>> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

/** Headers of an MCP POST in a given era (2025-03-26 allows batches), with `extra` headers on top. */
export function mcpHeaders(version = DEFAULT_VERSION, extra: Record<string, string> = {}): Record<string, string> {
  return { ...POST_HEADERS, 'mcp-protocol-version': version, ...extra }
}

/**
 * The JSON-RPC messages of an MCP answer, whichever form it took: a JSON object or batch array, or
 * an SSE stream (the `data:` lines of each event, joined). Comments and other events are skipped.
 */
export function answerMessages(text: string): any[] {
  const t = text.trimStart()
  if (t.startsWith('{') || t.startsWith('[')) return ([] as any[]).concat(JSON.parse(t))
  return text
    .split(/\n\n/)
    .map((ev) =>
      ev
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n')
    )
    .filter((d) => d.startsWith('{') || d.startsWith('['))
    .flatMap((d) => ([] as any[]).concat(JSON.parse(d)))
}

/**
 * Reads the JSON-RPC messages of an open SSE response one at a time, as they arrive (for streams
 * that stay open: a GET stream, a 2026-07-28 subscription). Each call resolves with the next
 * `data:` message; it rejects when the stream ends first.
 */
export function streamMessages(res: Response): () => Promise<Record<string, unknown>> {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  return async () => {
    for (;;) {
      const m = /data: (.*)\n\n/.exec(buffered)
      if (m) {
        buffered = buffered.slice(m.index + m[0].length)
        return JSON.parse(m[1]!) as Record<string, unknown>
      }
      const { value, done } = await reader.read()
      if (done) throw new Error('the stream ended')
      buffered += decoder.decode(value, { stream: true })
    }
  }
}

/**
 * Opens a session with an MCP endpoint (an `initialize` over Streamable HTTP, its answer read to
 * the end) and returns the headers of the session's next POSTs: {@link mcpHeaders} of `version`
 * plus its `mcp-session-id`.
 */
export async function openSession(url: string, version = DEFAULT_VERSION): Promise<Record<string, string>> {
  const init = await fetch(url, {
    method: 'POST',
    headers: mcpHeaders(version),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  })
  const sid = init.headers.get('mcp-session-id')!
  await init.text()
  return mcpHeaders(version, { 'mcp-session-id': sid })
}
