/**
 * The note of which origin sent a request the client answers (src/core/virtual/origin-requests.ts):
 * the stream passes byte for byte; a request's id and progress token are found across chunk
 * boundaries and CRLF lines; notifications and responses are not noted; an answer forgets its
 * note; an id or token two origins of one session use at once names no origin (the answer then
 * goes to every origin session).
 */
import { describe, expect, it } from 'vitest'
import type { ByteSource } from '../../../src/core/edge-response'
import { originOfAnswer, originOfProgress, watchOriginRequests } from '../../../src/core/virtual/origin-requests'

const enc = new TextEncoder()

/** A ByteSource over `chunks`. */
function source(chunks: string[]): ByteSource {
  const queue = chunks.map((c) => enc.encode(c))
  return {
    read: async () => {
      const value = queue.shift()
      return value ? { done: false, value } : { done: true }
    },
    cancel: async () => undefined,
  }
}

/** Reads a watched stream to its end; returns its text. */
async function drain(s: ByteSource): Promise<string> {
  const dec = new TextDecoder()
  let text = ''
  for (let n = await s.read(); !n.done; n = await s.read()) text += dec.decode(n.value, { stream: true })
  return text
}

const sampling = (id: number | string, token?: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'sampling/createMessage', params: { messages: [], maxTokens: 1, ...(token ? { _meta: { progressToken: token } } : {}) } })

describe('origin-requests', () => {
  it('passes the stream unchanged and notes a request split across chunks, with its progress token', async () => {
    const owner = {}
    const event = `event: message\r\ndata: ${sampling(0, 'tok')}\r\n\r\n`
    const chunks = [event.slice(0, 17), event.slice(17, 40), event.slice(40), 'data: {"jsonrpc":"2.0","id":5,"result":{}}\n\n']
    expect(await drain(watchOriginRequests(owner, 's1', 'files', source(chunks)))).toBe(chunks.join(''))
    expect(originOfProgress(owner, 's1', 'tok')).toBe('files')
    expect(originOfProgress(owner, 's2', 'tok')).toBeUndefined()
    // A response the origin sent (no method) is not a request of the origin.
    expect(originOfAnswer(owner, 's1', { raw: '5', key: 'n:5' })).toBeUndefined()
    expect(originOfAnswer(owner, 's1', { raw: '0', key: 'n:0' })).toBe('files')
    // Answered: forgotten, the token with it.
    expect(originOfAnswer(owner, 's1', { raw: '0', key: 'n:0' })).toBeUndefined()
    expect(originOfProgress(owner, 's1', 'tok')).toBeUndefined()
  })

  it('does not note notifications', async () => {
    const owner = {}
    await drain(watchOriginRequests(owner, 's1', 'files', source(['data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}\n\n'])))
    expect(originOfProgress(owner, 's1', 't')).toBeUndefined()
  })

  it('names no origin for an id or token two origins of one session use at once', async () => {
    const owner = {}
    await drain(watchOriginRequests(owner, 's1', 'files', source([`data: ${sampling('x', 'p')}\n\n`])))
    await drain(watchOriginRequests(owner, 's1', 'notes', source([`data: ${sampling('x', 'p')}\n\n`])))
    expect(originOfProgress(owner, 's1', 'p')).toBeUndefined()
    expect(originOfAnswer(owner, 's1', { raw: '"x"', key: 's:x' })).toBeUndefined()
  })
})
