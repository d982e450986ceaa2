/**
 * The SSE relay's event splitter (src/core/sse/sse-transform.ts transformSse) against eventsource-parser on
 * random streams (fast-check): LF, CRLF and CR line ends, comments, retry, id-only blocks, events
 * without a final blank line, cut into random chunks (also inside a CRLF and inside a UTF-8
 * sequence). Whatever the cuts:
 * - an untouched stream comes out byte for byte, whether events are skipped (`watch`) or
 *   parsed and left alone;
 * - the hooks see exactly the events eventsource-parser sees on the whole stream, in order;
 * - a rewritten event replaces only that event.
 */
import { createParser } from 'eventsource-parser'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { toReadableStream } from '../../../src/core/edge-response'
import { transformSse, type SseEvent } from '../../../src/core/sse/sse-transform'

const eol = fc.constantFrom('\n', '\r\n', '\r')
const line = fc.oneof(
  fc.constantFrom(
    'data: {"jsonrpc":"2.0","method":"notifications/progress"}',
    'data: caf\u00e9 \u{1f600}',
    'data:',
    'data',
    'event: message',
    'event: custom',
    'id: 7',
    ': comment',
    'retry: 1500',
    'data: {"id":1,"result":{}}'
  ),
  fc.string({ maxLength: 8 }).map((s) => `data: ${s.replace(/[\r\n]/g, '')}`)
)
const block = fc.tuple(fc.array(line, { minLength: 1, maxLength: 4 }), eol).map(([lines, e]) => lines.join(e) + e + e)
const stream = fc.tuple(fc.array(block, { minLength: 1, maxLength: 6 }), fc.boolean(), line).map(([blocks, unterminated, last]) => blocks.join('') + (unterminated ? last : ''))

function chunks(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const parts: Uint8Array[] = []
  let from = 0
  for (const c of at) {
    parts.push(bytes.subarray(from, c))
    from = c
  }
  parts.push(bytes.subarray(from))
  return new ReadableStream({
    pull(ctl) {
      const p = parts.shift()
      if (p === undefined) ctl.close()
      else ctl.enqueue(p)
    },
  })
}

function parseAll(text: string): SseEvent[] {
  const out: SseEvent[] = []
  const p = createParser({ onEvent: (m) => out.push({ data: m.data, ...(m.id !== undefined ? { id: m.id } : {}), ...(m.event !== undefined ? { event: m.event } : {}) }) })
  p.feed(text)
  p.feed('\n\n')
  return out
}

async function relay(text: string, cuts: number[], hooks: Parameters<typeof transformSse>[1]): Promise<string> {
  return new Response(toReadableStream(transformSse(chunks(new TextEncoder().encode(text), cuts).getReader(), hooks))).text()
}

describe('transformSse', () => {
  it('relays an untouched stream byte for byte and shows the hooks the events eventsource-parser sees', async () => {
    await fc.assert(
      fc.asyncProperty(stream, fc.array(fc.nat(400), { maxLength: 6 }), fc.constantFrom('none', 'some', 'all'), async (text, cuts, mode) => {
        const seen: SseEvent[] = []
        const out = await relay(text, cuts, {
          // none: every event relayed unparsed; some: events holding "result" or é parsed; all: every event parsed
          ...(mode === 'none' ? { watch: /never in the stream/ } : mode === 'some' ? { watch: /"result"|\u00e9/ } : {}),
          onEvent: (ev) => void seen.push(ev),
          onEnd: () => [],
        })
        // Byte for byte; an unterminated last event only gets the line ends it lacks.
        expect(out.startsWith(text)).toBe(true)
        expect(out.slice(text.length)).toMatch(/^\n{0,2}$/)
        if (out !== text) expect(parseAll(out)).toEqual(parseAll(text))
        if (mode === 'all') expect(seen).toEqual(parseAll(text))
      }),
      { numRuns: 400 }
    )
  })

  it('rewrites only the event the hook changes', async () => {
    await fc.assert(
      fc.asyncProperty(stream, fc.array(fc.nat(400), { maxLength: 6 }), async (text, cuts) => {
        const events = parseAll(text)
        const out = await relay(text, cuts, { onEvent: (ev) => (ev.data.includes('"result"') ? '{"changed":true}' : undefined), onEnd: () => [] })
        const after = parseAll(out)
        expect(after).toEqual(events.map((ev) => (ev.data.includes('"result"') ? { ...ev, data: '{"changed":true}' } : ev)))
      }),
      { numRuns: 300 }
    )
  })

  it('reads the first event past a BOM at the start of the stream, wherever the chunks are cut', async () => {
    const body = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')])
    for (const cut of [1, 2, 3, 4, 20]) {
      const seen: SseEvent[] = []
      const out = await new Response(
        toReadableStream(transformSse(chunks(body, [cut]).getReader(), { watch: /"result"/, onEvent: (ev) => void seen.push(ev), onEnd: () => [] }))
      ).text()
      expect(seen, `cut at ${cut}`).toEqual([{ data: '{"jsonrpc":"2.0","id":1,"result":{}}' }])
      expect(out).toBe('data: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')
    }
  })

  it('relays an event ended by CR CR at once, while the origin keeps the stream open', async () => {
    const enc = new TextEncoder()
    let later!: ReadableStreamDefaultController<Uint8Array>
    const source = new ReadableStream<Uint8Array>({
      start(c) {
        later = c
        c.enqueue(enc.encode('data: {"id":1,"result":{}}\r\r'))
      },
    })
    const seen: SseEvent[] = []
    const reader = transformSse(source.getReader(), { watch: /"result"/, onEvent: (ev) => void seen.push(ev), onEnd: () => [] })
    const first = await reader.read()
    if (first.done) throw new Error('the relay ended before the first event')
    expect(new TextDecoder().decode(first.value)).toBe('data: {"id":1,"result":{}}\r\r')
    expect(seen).toEqual([{ data: '{"id":1,"result":{}}' }])
    // The LF that may follow belongs to the last CR (CRLF) and dispatches nothing more.
    later.enqueue(enc.encode('\ndata: two\r\n\r\n'))
    later.close()
    let rest = ''
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value)
    expect(rest).toBe('\ndata: two\r\n\r\n')
    expect(seen).toHaveLength(1)
  })

  it('ends the stream with an error instead of holding an event past maxEventChars', async () => {
    const enc = new TextEncoder()
    const parts = [enc.encode('data: small\n\n'), ...Array.from({ length: 40 }, () => enc.encode('x'.repeat(100)))]
    let ends: string[] = []
    const source = new ReadableStream<Uint8Array>({
      pull(c) {
        const p = parts.shift()
        if (p) c.enqueue(p)
        // never closes: only the bound can end it
      },
    })
    const out = await new Response(
      toReadableStream(transformSse(source.getReader(), { onEvent: () => undefined, onEnd: (reason) => ((ends = [...ends, reason]), [{ data: 'tail' }]) }, { maxEventChars: 1000 }))
    ).text()
    expect(ends).toEqual(['error'])
    expect(out).toBe('data: small\n\ndata: tail\n\n')
  })
})
