/**
 * The SSE event splitter (src/core/sse/event-splitter.ts): event boundaries for every line-end
 * form, events spanning chunks, the watch pattern, raw bytes relayed as the very same bytes, the
 * event-size bound, and an event cut off by the end of the stream.
 */
import { describe, expect, it } from 'vitest'
import { eventEnd, SseEventSplitter, type LineState } from '../../../src/core/sse/event-splitter'

const enc = new TextEncoder()
const dec = new TextDecoder()

/** Splits `chunks` (text or bytes) and records the output as ['raw' | 'event', text] pairs. */
function split(chunks: (string | Uint8Array)[], options: ConstructorParameters<typeof SseEventSplitter>[1] = {}) {
  const out: ['raw' | 'event', string][] = []
  const rawPieces: (string | Uint8Array)[] = []
  const s = new SseEventSplitter(
    {
      raw: (p) => {
        rawPieces.push(p)
        out.push(['raw', typeof p === 'string' ? p : dec.decode(p)])
      },
      event: (t) => out.push(['event', t]),
    },
    options
  )
  for (const c of chunks) s.push(typeof c === 'string' ? enc.encode(c) : c)
  s.end()
  return { out, rawPieces, splitter: s }
}

describe('eventEnd', () => {
  const fresh = (): LineState => ({ lineEmpty: true, afterCr: false })
  it('finds the blank line for LF, CRLF and CR line ends', () => {
    expect(eventEnd('data: a\n\ndata: b', 0, fresh(), false)).toBe(9)
    // A CR ends its line at once: the blank line's LF is left for the next block, which swallows it.
    const st = fresh()
    expect(eventEnd('data: a\r\n\r\nx', 0, st, true)).toBe(10)
    expect(st.afterCr).toBe(true)
    expect(eventEnd('data: a\r\rx', 0, fresh(), true)).toBe(9)
    expect(eventEnd('data: a\n', 0, fresh(), false)).toBe(-1)
  })
  it('carries the state across chunks: a CR at the end of one and the LF at the start of the next are one line end', () => {
    const st = fresh()
    expect(eventEnd('data: a\r', 0, st, true)).toBe(-1)
    expect(st).toEqual({ lineEmpty: true, afterCr: true })
    expect(eventEnd('\n\r\n', 0, st, true)).toBe(2)
  })
})

describe('SseEventSplitter', () => {
  it('without a watch pattern every event is handed on as an event, in order', () => {
    const { out } = split(['data: 1\n\ndata: 2\n\n'])
    expect(out).toEqual([
      ['event', 'data: 1\n\n'],
      ['event', 'data: 2\n\n'],
    ])
  })

  it('with a watch pattern only matching events are events; the rest is relayed raw, as one piece per run', () => {
    const { out } = split([': c\n\ndata: {"progress":1}\n\ndata: {"result":{}}\n\ndata: {"progress":2}\n\n'], { watch: /"result"|"error"/ })
    expect(out).toEqual([
      ['raw', ': c\n\ndata: {"progress":1}\n\n'],
      ['event', 'data: {"result":{}}\n\n'],
      ['raw', 'data: {"progress":2}\n\n'],
    ])
  })

  it('relays an ASCII chunk of untouched events as subarrays of the chunk itself (no copy, no re-encoding)', () => {
    const chunk = enc.encode('data: a\n\ndata: b\n\n')
    const { rawPieces } = split([chunk], { watch: /"result"/ })
    expect(rawPieces).toHaveLength(1)
    expect(rawPieces[0]).toBeInstanceOf(Uint8Array)
    expect((rawPieces[0] as Uint8Array).buffer).toBe(chunk.buffer)
  })

  it('joins an event that spans chunks, and finds a watched word cut between two chunks', () => {
    const { out } = split(['data: {"res', 'ult":1}\n', '\n'], { watch: /"result"/ })
    expect(out).toEqual([['event', 'data: {"result":1}\n\n']])
  })

  it('keeps a UTF-8 character cut between chunks whole', () => {
    const bytes = enc.encode('data: "é€😀"\n\n')
    const { out } = split([bytes.subarray(0, 8), bytes.subarray(8, 11), bytes.subarray(11)])
    expect(out).toEqual([['event', 'data: "é€😀"\n\n']])
  })

  it('drops a BOM at the start of the stream only', () => {
    const { out } = split(['\ufeffdata: 1\n\n', 'data: \ufeff2\n\n'])
    expect(out.map(([, t]) => t)).toEqual(['data: 1\n\n', 'data: \ufeff2\n\n'])
  })

  it('an event cut off by the end is completed and handed on as an event even when not watched', () => {
    expect(split(['data: {"id":1'], { watch: /"result"/ }).out).toEqual([['event', 'data: {"id":1\n\n']])
    expect(split(['data: x\n'], { watch: /"result"/ }).out).toEqual([['event', 'data: x\n\n']])
    // Only the LF of a CRLF left: nothing to dispatch, relayed as it came.
    expect(split(['data: x\r\n\r', '\n'], { watch: /"result"/ }).out).toEqual([
      ['raw', 'data: x\r\n\r'],
      ['raw', '\n'],
    ])
  })

  it('sets tooLarge once the event being received passes maxEventChars', () => {
    const s = new SseEventSplitter({ raw: () => undefined, event: () => undefined }, { maxEventChars: 10 })
    s.push(enc.encode('data: 12'))
    expect(s.tooLarge).toBe(false)
    s.push(enc.encode('3456789'))
    expect(s.tooLarge).toBe(true)
  })

  it('a large event in many small chunks costs its length, not its square', () => {
    const piece = enc.encode('x'.repeat(64))
    const chunks: Uint8Array[] = [enc.encode('data: ')]
    for (let i = 0; i < 20_000; i++) chunks.push(piece)
    chunks.push(enc.encode('\n\n'))
    const t0 = performance.now()
    const { out } = split(chunks, { watch: /"result"/ })
    expect(performance.now() - t0).toBeLessThan(1000)
    expect(out).toHaveLength(1)
    expect(out[0]![1].length).toBe(6 + 64 * 20_000 + 2)
  })
})
