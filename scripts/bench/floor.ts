/**
 * The floor: the barest pass-through proxy Node can run in front of the origin. Hono on
 * @hono/node-server; every POST is forwarded to `ORIGIN_BASE` + the same path, with nothing
 * read, checked or logged. `FLOOR_CLIENT=undici` forwards with undici's `request` over a
 * keep-alive pool (the limit a Node gateway can reach); `FLOOR_CLIENT=fetch` forwards with the
 * global `fetch` (for context); `FLOOR_CLIENT=dispatch` with the edge's own origin client (for
 * context). JSON replies are read whole and sent as one string (the fastest
 * body @hono/node-server can write); SSE replies are streamed, never buffered, like the edge does.
 * Reports `{ port }` over IPC when listening.
 */
import { serve } from '@hono/node-server'
import { Hono } from 'hono'
import type { AddressInfo } from 'node:net'
import type { Readable } from 'node:stream'
import { Agent, request } from 'undici'
import { createUndiciOriginClient } from '../../src/adapters/node/origin-client'
import { toReadableStream } from '../../src/core/edge-response'

/**
 * undici's body as a pull-based web stream, one chunk per read, for Hono's `Response` (not
 * `Readable.toWeb`: on Node 20 it throws ERR_INVALID_STATE when the client leaves in the middle
 * of an SSE reply); cancel destroys the body.
 */
function toWeb(body: Readable): ReadableStream<Uint8Array> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>
  return toReadableStream({
    read: () => it.next() as Promise<{ done: false; value: Uint8Array } | { done: true }>,
    cancel: async () => {
      body.on('error', () => undefined)
      body.destroy()
    },
  })
}

const base = process.env.ORIGIN_BASE!
const mode = process.env.FLOOR_CLIENT === 'fetch' || process.env.FLOOR_CLIENT === 'dispatch' ? process.env.FLOOR_CLIENT : 'undici'
// FLOOR_CLIENT=dispatch (context): the same proxy forwarding with the edge's own origin client
// (undici `dispatch`), so the table can show what the edge's own work costs apart from the client.
const edgeClient = mode === 'dispatch' ? createUndiciOriginClient() : null
const agent = new Agent({ keepAliveTimeout: 10_000, connections: 128, pipelining: 1 })
const app = new Hono()

app.post('*', async (c) => {
  const body = await c.req.text()
  const headers = { 'content-type': 'application/json', accept: c.req.header('accept') ?? 'application/json, text/event-stream' }
  const url = base + c.req.path
  if (mode === 'fetch') {
    const res = await fetch(url, { method: 'POST', headers, body })
    const type = res.headers.get('content-type') ?? ''
    if (type.includes('event-stream')) return new Response(res.body, { status: res.status, headers: { 'content-type': type } })
    return new Response(await res.text(), { status: res.status, headers: { 'content-type': type } })
  }
  if (edgeClient) {
    const reply = await edgeClient({ method: 'POST', url, headers, body, timeoutMs: 0 })
    const type = reply.headers['content-type'] ?? ''
    if (type.includes('event-stream')) return new Response(toReadableStream(reply.stream()!), { status: reply.status, headers: { 'content-type': type } })
    return new Response(await reply.text(), { status: reply.status, headers: { 'content-type': type } })
  }
  const res = await request(url, { method: 'POST', headers, body, dispatcher: agent })
  const type = String(res.headers['content-type'] ?? '')
  if (type.includes('event-stream')) return new Response(toWeb(res.body), { status: res.statusCode, headers: { 'content-type': type } })
  return new Response(await res.body.text(), { status: res.statusCode, headers: { 'content-type': type } })
})

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => {
  process.send!({ port: (server.address() as AddressInfo).port })
})
process.on('disconnect', () => process.exit(0))
