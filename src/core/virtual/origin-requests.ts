/**
 * @module core/virtual/origin-requests
 * Which origin sent a request that a client of a virtual server answers. A 2025 origin may send
 * the client a request (`sampling/createMessage`, `elicitation/create`, `roots/list`) inside the
 * SSE answer of a routed request; the client's response, and its `notifications/progress` on a
 * `progressToken` that request carried, come back in later POSTs that name only the id or the
 * token. The edge notes, per process, the id and token of each such request with its origin while
 * relaying the stream (the bytes pass unchanged), so the answer and the progress go to that origin
 * alone. Another replica has no note: there they go to every origin session of the client's
 * session, where only the origin that sent the request knows the id.
 */
import type { ByteSource } from '../edge-response'
import { isObject, toRawId, type RawId } from '../jsonrpc/jsonrpc'
import { parseWithinDepth } from '../jsonrpc/json-scan'

/** Most requests noted per process (the oldest forgotten first: their answers then go to every origin session). */
const MAX_NOTED = 4096

/** One noted request: its origin ('' when two origins sent the id at once: then every session gets the answer) and, when it carried one, the key of its progress token. */
interface Noted {
  origin: string
  token?: string
}

interface Book {
  /** `<session>\n<id key>` -> the request. */
  byId: Map<string, Noted>
  /** `<session>\n<token key>` -> its origin ('' when two origins gave the token at once). */
  byToken: Map<string, string>
}

const books = new WeakMap<object, Book>()

function bookOf(owner: object): Book {
  let b = books.get(owner)
  if (!b) books.set(owner, (b = { byId: new Map(), byToken: new Map() }))
  return b
}

function setBounded<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key)
  map.set(key, value)
  if (map.size > MAX_NOTED) map.delete(map.keys().next().value!)
}

/** Notes the request an SSE event's data is, when it is one (an id and a method). */
function noteRequest(book: Book, session: string, origin: string, data: string): void {
  if (!data.includes('"method"') || !data.includes('"id"')) return
  const v = parseWithinDepth(data)
  if (!isObject(v) || typeof v.method !== 'string' || !('id' in v)) return
  const id = toRawId(v.id)
  if (!id) return
  const meta = isObject(v.params) && isObject(v.params._meta) ? v.params._meta : undefined
  const token = meta ? toRawId(meta.progressToken)?.key : undefined
  // Two origins of one client session may use the same id (or token) at once: the client cannot
  // tell them apart either, so its answer then goes to every origin session, as without a note.
  const idKey = `${session}\n${id.key}`
  const before = book.byId.get(idKey)
  setBounded(book.byId, idKey, { origin: before && before.origin !== origin ? '' : origin, ...(token !== undefined ? { token } : {}) })
  if (token === undefined) return
  const tokenKey = `${session}\n${token}`
  const had = book.byToken.get(tokenKey)
  setBounded(book.byToken, tokenKey, had !== undefined && had !== origin ? '' : origin)
}

/**
 * The SSE answer of a routed request, unchanged, noting each request `origin` sends the client in it.
 * @param owner the edge's ports (one book per edge)
 * @param session the client's session id with the virtual server (checked by the caller)
 */
export function watchOriginRequests(owner: object, session: string, origin: string, body: ByteSource): ByteSource {
  const book = bookOf(owner)
  const decoder = new TextDecoder()
  let buffered = ''
  let data: string[] = []
  const scan = (chunk: Uint8Array) => {
    buffered += decoder.decode(chunk, { stream: true })
    for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
      let line = buffered.slice(0, i)
      buffered = buffered.slice(i + 1)
      if (line.endsWith('\r')) line = line.slice(0, -1)
      if (line === '') {
        if (data.length > 0) noteRequest(book, session, origin, data.join('\n'))
        data = []
      } else if (line.startsWith('data:')) data.push(line.slice(line.charCodeAt(5) === 32 ? 6 : 5))
    }
  }
  return {
    read: async () => {
      const n = await body.read()
      if (!n.done) scan(n.value)
      return n
    },
    cancel: (reason) => body.cancel(reason),
  }
}

/** The origin that sent the request a client's response answers (the note is then forgotten), when noted here. */
export function originOfAnswer(owner: object, session: string, id: RawId | null): string | undefined {
  const book = books.get(owner)
  if (!book || !id) return undefined
  const key = `${session}\n${id.key}`
  const noted = book.byId.get(key)
  if (!noted) return undefined
  book.byId.delete(key)
  if (noted.token !== undefined) book.byToken.delete(`${session}\n${noted.token}`)
  return noted.origin || undefined
}

/** The origin that gave the progress token of a client's `notifications/progress`, when noted here. */
export function originOfProgress(owner: object, session: string, token: unknown): string | undefined {
  const key = toRawId(token)?.key
  return (key === undefined ? undefined : books.get(owner)?.byToken.get(`${session}\n${key}`)) || undefined
}
