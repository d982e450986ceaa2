/**
 * @module core/virtual/session-token
 * The session id a virtual server gives its client (docs/virtual-servers.md#sessions): it carries
 * what the edge needs to serve the session on any replica with no shared store (the virtual
 * server's name, the era each origin is spoken to in and the origin's own session id), signed
 * with HMAC-SHA256 so a client can neither forge nor swap an origin's session. WebCrypto only:
 * it runs on Node and on Workers.
 *
 * Form: `v1.<payload>.<mac>`, both base64url; the payload is JSON
 * `{ "v": <virtual server>, "b": { <origin>: [<era>, <origin session id>?] }, "c"?: <caller tag> }`
 * (`c` with auth on: the {@link callerTag} of the verified caller it was issued to). Only visible
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
  /** With auth on: the {@link callerTag} of the caller it was issued to, the only one it serves. Unset: a bearer capability. */
  caller?: string
}

/** What every MAC covers before the payload: a key used for another purpose never signs a session. */
const CONTEXT = 'mcp-edge virtual session v1\n'
/** What a caller tag's MAC covers first: a tag is never a session's MAC, nor the reverse. */
const CALLER_CONTEXT = 'mcp-edge virtual session caller v1\n'
/** Bytes of the caller tag kept (128 bits: no second caller is found to share one). */
const CALLER_TAG_BYTES = 16
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
  const payload = toBase64Url(encoder.encode(JSON.stringify(session.caller !== undefined ? { v: session.server, b, c: session.caller } : { v: session.server, b })))
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(CONTEXT + payload)))
  return `v1.${payload}.${toBase64Url(mac)}`
}

/**
 * The caller tag a session is bound to with auth on: HMAC-SHA256 under the session key of the
 * issuer and the caller's identity (its `sub` and OAuth client, as the edge keys a caller's private
 * lists: validation/caller-scope.ts `identityScopeKey`), cut to 16 bytes, base64url. Keyed, so
 * the tag in a (readable) session id tells nothing of the caller to whoever holds the id; the
 * identity, not the token, so a token refreshed mid-session keeps the session.
 * @param identityKey `identityScopeKey` of the verified caller
 */
export async function callerTag(key: CryptoKey, issuer: string, identityKey: string): Promise<string> {
  // Length-prefixed issuer: no issuer and identity pair reads as another.
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(`${CALLER_CONTEXT}${issuer.length}:${issuer}${identityKey}`))
  return toBase64Url(new Uint8Array(mac, 0, CALLER_TAG_BYTES))
}

/** The payload of a session id `key` signed, parsed: null for anything else (not ours, altered, another key's). */
async function verifiedPayload(key: CryptoKey, token: string): Promise<Record<string, unknown> | null> {
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
  return isObject(v) && typeof v.v === 'string' ? v : null
}

/**
 * The virtual server that issued a session id, when `key` signed it (any virtual server of this
 * edge); null for anything else. For the origin routes, which must not pass such an id on.
 */
export async function issuingServer(key: CryptoKey, token: string): Promise<string | null> {
  return ((await verifiedPayload(key, token))?.v as string | undefined) ?? null
}

/**
 * The session a session id carries, when `key` signed it and it was issued by `server`. The caller
 * binding (`caller`) is returned as signed; comparing it with the caller of the request is the
 * caller's business (virtual-caller.ts `sessionFor`), so a refusal can be logged for what it is.
 * @returns null for anything else (not ours, altered, another virtual server's, another key's)
 */
export async function readSession(key: CryptoKey, token: string, server: string): Promise<VirtualSession | null> {
  // One text per session: base64 decoding ignores the unused low bits of the last character, and
  // another spelling of the MAC must not pass for another session (an ended one is known by its
  // text). issuingServer takes any spelling: the origin routes refuse every one of them.
  const mac = token.slice(token.lastIndexOf('.') + 1)
  const bytes = fromBase64Url(mac)
  if (bytes === null || toBase64Url(bytes) !== mac) return null
  const v = await verifiedPayload(key, token)
  if (!v || v.v !== server || !isObject(v.b)) return null
  const backends: Record<string, BackendSession> = {}
  for (const [origin, entry] of Object.entries(v.b)) {
    if (!Array.isArray(entry) || !isKnownVersion(entry[0])) return null
    const s: BackendSession = { era: entry[0] }
    if (typeof entry[1] === 'string') s.sessionId = entry[1]
    Object.defineProperty(backends, origin, { value: s, enumerable: true, writable: true, configurable: true })
  }
  if (v.c !== undefined && typeof v.c !== 'string') return null
  return v.c !== undefined ? { server, backends, caller: v.c } : { server, backends }
}
