/**
 * @module check/session
 * The sessions of `mcp-edge check`: the handshake with the official SDK clients (v1
 * `@modelcontextprotocol/sdk` offering one 2025 revision, v2 `@modelcontextprotocol/client` in
 * `auto` negotiation for 2026-07-28), what it negotiated, its end (DELETE), and a failed
 * handshake as one line naming its cause.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client'
import { EdgeError } from 'mcp-edge-validator/rules'
import { isObject, type ProtocolVersion } from './edge-rules'
import { sdkFetch, type RequestBudget } from './http'
import { printable } from './reply'

/** What a handshake needs of the run's options. */
export interface SessionOptions {
  /** Time the handshake may take, and each request of it, in ms. */
  timeoutMs: number
  /** Extra request headers on every request (names lower case). */
  headers?: Record<string, string>
  /** `clientInfo.version` of the handshake. */
  clientVersion?: string
}

/** Node's and undici's network error codes, as the reason a handshake row gives. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed TLS certificate in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not verifiable',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not name this host',
}

/**
 * A handshake failure as one line: a network failure by its cause (fetch says only "fetch failed";
 * the code is on `err.cause`), e.g. `cannot connect: connection refused (ECONNREFUSED)`; anything
 * else by the SDK's message, without a stack, at most 80 characters.
 */
export function sdkError(err: unknown): string {
  let e: unknown = err
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && Object.hasOwn(NETWORK_REASONS, code)) return `cannot connect: ${NETWORK_REASONS[code]} (${code})`
    e = (e as { cause?: unknown }).cause
  }
  const msg = (err instanceof Error ? err.message : String(err)).replace(/^Error: /, '')
  // The SDK v1 error of a non-2xx answer carries the status as `code` and the body it read in its
  // message: `null` when the body could not be read (over 1 MiB: boundedResponse).
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  if (typeof code === 'number' && code >= 100 && code <= 599 && !msg.includes(`HTTP ${code}`))
    return printable(`HTTP ${code}: ${msg.replace(/: null$/, ': (body over 1 MiB or unreadable)')}`, 80)
  return printable(msg, 80)
}

/**
 * A handshake the server refused with HTTP 401 (MCP Authorization: a protected server answers 401
 * with `WWW-Authenticate` until the client sends a valid access token). Not a version problem.
 */
export class AuthorizationRequired extends EdgeError {
  override readonly name = 'AuthorizationRequired'
  override readonly code = 'EDGE_ERR_CHECK_AUTHORIZATION'
  constructor(
    /** The answer's `WWW-Authenticate` (server text: shown only through the report's sanitiser), or '' when it sent none. */
    readonly challenge: string
  ) {
    super('the server requires authorization (HTTP 401)')
  }
}

/**
 * Runs a handshake, and when it fails after the server answered 401, throws
 * {@link AuthorizationRequired} instead of the SDK's error (the v2 client reports a 401 to
 * `server/discover` as a failed version negotiation).
 */
async function withAuthorizationCheck(connect: (onAnswer: (status: number, headers: Headers) => void) => Promise<Session>): Promise<Session> {
  let challenge: string | undefined
  try {
    return await connect((status, headers) => {
      if (status === 401) challenge = headers.get('www-authenticate') ?? ''
    })
  } catch (err) {
    if (challenge !== undefined) throw new AuthorizationRequired(challenge)
    throw err
  }
}

export interface Session {
  negotiated: string
  server?: string
  sessionId?: string
  /** Ends the session (DELETE when there is one) and closes the client. */
  close(): Promise<void>
}

/** What {@link connectSession} needs of an SDK client (v1 `Client` or v2 client). */
interface SdkClient {
  onerror?: (error: Error) => void
  connect(transport: never, options: { timeout: number }): Promise<void>
  close(): Promise<void>
  getServerVersion(): { name: string; version: string } | undefined
}

/** What {@link connectSession} needs of an SDK Streamable HTTP client transport. */
interface SdkTransport {
  readonly sessionId?: string | undefined
  terminateSession(): Promise<void>
}

/**
 * Connects an SDK client (the handshake, within `timeoutMs` ms) and describes the session; a failed
 * handshake closes the client and rethrows the SDK's error.
 * @param negotiated the protocol version the handshake settled on, read after it (undefined: none)
 */
async function connectSession(client: SdkClient, transport: SdkTransport, timeoutMs: number, negotiated: () => string | undefined): Promise<Session> {
  client.onerror = () => undefined
  try {
    await client.connect(transport as never, { timeout: timeoutMs })
  } catch (err) {
    await client.close().catch(() => undefined)
    throw err
  }
  const info = client.getServerVersion()
  const sessionId = transport.sessionId
  return {
    negotiated: negotiated() ?? '(none)',
    ...(info ? { server: printable(`${info.name} ${info.version}`, 40) } : {}),
    ...(sessionId !== undefined ? { sessionId } : {}),
    close: async () => {
      if (sessionId !== undefined) await transport.terminateSession().catch(() => undefined)
      await client.close().catch(() => undefined)
    },
  }
}

/**
 * The 2026-07-28 "handshake": the official SDK v2 client in `auto` negotiation probes with
 * `server/discover` and stays modern only on definitive evidence (a DiscoverResult offering a
 * modern version); otherwise it falls back to `initialize`, and the negotiated version says so.
 */
export async function modernHandshake(url: string, opts: SessionOptions, budget: RequestBudget): Promise<Session> {
  return withAuthorizationCheck((onAnswer) => {
    const client = new ModernClient({ name: 'mcp-edge-check', version: opts.clientVersion ?? '0.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } })
    const transport = new ModernTransport(new URL(url), { requestInit: { headers: opts.headers ?? {} }, fetch: sdkFetch(budget, opts.timeoutMs, onAnswer) })
    return connectSession(client, transport, opts.timeoutMs, () => client.getNegotiatedProtocolVersion())
  })
}

/** The official SDK handshake, offering `version` (the SDK v1 client always offers its latest, so the offer is rewritten). */
export async function handshake(url: string, version: ProtocolVersion, opts: SessionOptions, budget: RequestBudget): Promise<Session> {
  return withAuthorizationCheck((onAnswer) => {
    const client = new Client({ name: 'mcp-edge-check', version: opts.clientVersion ?? '0.0.0' }, { capabilities: {} })
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: opts.headers ?? {} }, fetch: sdkFetch(budget, opts.timeoutMs, onAnswer) })
    const send = transport.send.bind(transport)
    transport.send = (msg, o) => {
      if ('method' in msg && msg.method === 'initialize' && isObject(msg.params)) msg.params.protocolVersion = version
      return send(msg, o)
    }
    return connectSession(client, transport, opts.timeoutMs, () => transport.protocolVersion)
  })
}
