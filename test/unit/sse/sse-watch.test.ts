/**
 * src/core/sse/sse-watch.ts: the deadline of a watched stream (a GET stream's token expiry): the
 * last event comes after the origin's bytes, on a line of its own, and a deadline past what one
 * timer can hold (2^31-1 ms) does not fire at once.
 */
import { describe, expect, it } from 'vitest'
import type { ByteSource } from '../../../src/core/edge-response'
import { watchSse } from '../../../src/core/sse/sse-watch'

const END = { event: 'mcp-edge-stream-end', data: '{"reason":"token_expired"}' }

/** A source that gives `chunks` one by one, each after `gapMs`, then stays silent until cancelled (or ends, with `end`). */
function source(chunks: string[], gapMs: number, end = false): ByteSource & { cancelled: boolean } {
  const enc = new TextEncoder()
  let i = 0
  let wake: (() => void) | undefined
  const s = {
    cancelled: false,
    async read(): Promise<{ done: false; value: Uint8Array } | { done: true }> {
      if (i < chunks.length) {
        await new Promise((r) => setTimeout(r, gapMs))
        return { done: false, value: enc.encode(chunks[i++]!) }
      }
      if (end) return { done: true }
      await new Promise<void>((r) => (wake = r))
      return { done: true }
    },
    async cancel() {
      s.cancelled = true
      wake?.()
    },
  }
  return s
}

async function readAll(b: ByteSource): Promise<string> {
  const dec = new TextDecoder()
  let out = ''
  for (;;) {
    const r = await b.read()
    if (r.done) return out
    out += dec.decode(r.value as Uint8Array, { stream: true })
  }
}

describe('watchSse with a deadline', () => {
  it('after whole events: the origin is cancelled and the last event follows them', async () => {
    const src = source(['data: 1\n\n', 'data: 2\n\n'], 5)
    const out = await readAll(watchSse(src, () => undefined, 0, { atMs: Date.now() + 150, event: END }))
    expect(out).toBe('data: 1\n\ndata: 2\n\nevent: mcp-edge-stream-end\ndata: {"reason":"token_expired"}\n\n')
    expect(src.cancelled).toBe(true)
  })

  it('inside a line of an event: a line end first, and that partial event becomes part of the named one', async () => {
    const src = source(['data: 1\n\n', 'data: {"partial'], 5)
    const out = await readAll(watchSse(src, () => undefined, 0, { atMs: Date.now() + 150, event: END }))
    expect(out).toBe('data: 1\n\ndata: {"partial\nevent: mcp-edge-stream-end\ndata: {"reason":"token_expired"}\n\n')
  })

  it('STREAM_MAX_MS first: the stream ends without the event', async () => {
    const src = source(['data: 1\n\n'], 5)
    const out = await readAll(watchSse(src, () => undefined, 100, { atMs: Date.now() + 60_000, event: END }))
    expect(out).toBe('data: 1\n\n')
  })

  it('a deadline 40 days away (past one timer) does not end the stream early', async () => {
    const src = source(['data: 1\n\n', 'data: 2\n\n'], 30, true)
    const out = await readAll(watchSse(src, () => undefined, 0, { atMs: Date.now() + 40 * 86_400_000, event: END }))
    expect(out).toBe('data: 1\n\ndata: 2\n\n')
  })
})
