/**
 * @module core/virtual/session-token
 * The session id a virtual server gives its client (docs/virtual-servers.md#sessions): it carries
 * what the edge needs to serve the session on any replica with no shared store (the virtual
 * server's name, the era each origin is spoken to in and the origin's own session id), signed
 * with HMAC-SHA256 so a client can neither forge nor swap an origin's session. WebCrypto only:
 * it runs on Node and on Workers.
 *
 * Form: `v1.<payload>.<mac>`, both base64url; the payload is JSON
 * `{ "v": <virtual server>, "b": { <origin>: [<era>, <origin session id>?] } }`. Only visible
 * ASCII, as MCP's transports require of a session id.
 */
import { isKnownVersion, type ProtocolVersion } from '../jsonrpc/versions'
import { isObject } from '../jsonrpc/jsonrpc'

/** What one origin's entry of a session holds: the era the edge speaks to it, and its session id when it gave one. */
export interface BackendSession {
  era: ProtocolVersion
  sessionId?: string
}

/** The content of a virtual-server session id. */
export interface VirtualSession {
  /** The virtual server that issued it: the only one it is valid on. */
  server: string
  /** Per origin of the virtual server that answered at `initialize`. */
  backends: Record<string, BackendSession>
}

/** What every MAC covers before the payload: a key used for another purpose never signs a session. */
const CONTEXT = 'mcp-edge virtual session v1\n'
/** The longest session id read (a few hundred bytes per origin; more is not one of ours). */
const MAX_TOKEN_CHARS = 16_384

const encoder = new TextEncoder()

function toBase64Url(bytes: Uint8Array): string {
  let bin = ''
  for (const b of bytes) bin += String.fromCharCode(b)
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null
  try {
    const bin = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4))
    const out = new Uint8Array(bin.length)
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
    return out
  } catch {
    return null
  }
}

/**
 * The HMAC-SHA256 key of session ids.
 * @param secret `VIRTUAL_SESSION_KEY`; null: 32 random bytes (valid in this process or isolate only)
 */
export async function sessionKey(secret: string | null): Promise<CryptoKey> {
  const raw = secret === null ? crypto.getRandomValues(new Uint8Array(32)) : encoder.encode(secret)
  return crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify'])
}

/** The session id for `session`, signed with `key`. */
export async function mintSession(key: CryptoKey, session: VirtualSession): Promise<string> {
  const b: Record<string, [string] | [string, string]> = {}
  for (const [origin, s] of Object.entries(session.backends)) b[origin] = s.sessionId !== undefined ? [s.era, s.sessionId] : [s.era]
  const payload = toBase64Url(encoder.encode(JSON.stringify({ v: session.server, b })))
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(CONTEXT + payload)))
  return `v1.${payload}.${toBase64Url(mac)}`
}

/**
 * The session a session id carries, when `key` signed it and it was issued by `server`.
 * @returns null for anything else (not ours, altered, another virtual server's, another key's)
 */
export async function readSession(key: CryptoKey, token: string, server: string): Promise<VirtualSession | null> {
  if (token.length > MAX_TOKEN_CHARS) return null
  const parts = token.split('.')
  if (parts.length !== 3 || parts[0] !== 'v1') return null
  const mac = fromBase64Url(parts[2]!)
  const payload = fromBase64Url(parts[1]!)
  if (mac === null || payload === null) return null
  // verify compares in constant time.
  if (!(await crypto.subtle.verify('HMAC', key, mac as Uint8Array<ArrayBuffer>, encoder.encode(CONTEXT + parts[1])))) return null
  let v: unknown
  try {
    v = JSON.parse(new TextDecoder().decode(payload))
  } catch {
    return null
  }
  if (!isObject(v) || v.v !== server || !isObject(v.b)) return null
  const backends: Record<string, BackendSession> = {}
  for (const [origin, entry] of Object.entries(v.b)) {
    if (!Array.isArray(entry) || !isKnownVersion(entry[0])) return null
    const s: BackendSession = { era: entry[0] }
    if (typeof entry[1] === 'string') s.sessionId = entry[1]
    Object.defineProperty(backends, origin, { value: s, enumerable: true, writable: true, configurable: true })
  }
  return { server, backends }
}
