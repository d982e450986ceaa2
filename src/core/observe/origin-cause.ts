/**
 * @module core/observe/origin-cause
 * Why an origin call failed, as a short code and a fixed text for the log line (never for the
 * response: a client gets the D9 gateway error only, docs/observability.md). Built from the
 * error's `code` (Node system errors, undici, TLS) or its type; never from a message that could
 * hold a URL, a header or a body, except the edge's own pull messages (plain `Error`s thrown by
 * src/core/forwarding/tool-list-pull.ts, which name a step, never data).
 */
import { OriginReplyTooLargeError, OriginTimeoutError } from '../ports'
import { EdgeError, PullError } from '../errors'

/** A failure's cause: `code` is one of the codes below or a Node/undici error code; `text` is short and fixed. */
export interface OriginCause {
  code: string
  text: string
}

const BY_CODE: Record<string, [string, string]> = {
  ECONNREFUSED: ['ECONNREFUSED', 'connection refused by the origin'],
  ECONNRESET: ['ECONNRESET', 'connection reset by the origin'],
  EPIPE: ['ECONNRESET', 'connection closed by the origin while sending'],
  ETIMEDOUT: ['TIMEOUT', 'connecting to the origin timed out'],
  EHOSTUNREACH: ['EHOSTUNREACH', 'origin host unreachable'],
  ENETUNREACH: ['ENETUNREACH', 'origin network unreachable'],
  ENOTFOUND: ['DNS', 'the origin host name does not resolve'],
  EAI_AGAIN: ['DNS', 'DNS lookup of the origin host failed (temporary)'],
  EAI_FAIL: ['DNS', 'DNS lookup of the origin host failed'],
  ERR_INVALID_URL: ['INVALID_URL', 'the origin URL is not a valid URL'],
  UND_ERR_CONNECT_TIMEOUT: ['TIMEOUT', 'connecting to the origin timed out'],
  UND_ERR_HEADERS_TIMEOUT: ['TIMEOUT', 'the origin sent no headers in time'],
  UND_ERR_BODY_TIMEOUT: ['TIMEOUT', 'the origin body stalled'],
  UND_ERR_SOCKET: ['ECONNRESET', 'the origin closed the connection'],
  UND_ERR_CLOSED: ['ECONNRESET', 'the connection to the origin was closed'],
  UND_ERR_INVALID_ARG: ['INVALID_URL', 'the origin URL or request is not valid'],
  UND_ERR_ABORTED: ['ABORTED', 'the origin call was aborted (the client went away)'],
  ABORT_ERR: ['ABORTED', 'the origin call was aborted (the client went away)'],
  HPE_INVALID_CONSTANT: ['PROTOCOL', 'the origin did not answer HTTP'],
  UND_ERR_RESPONSE_STATUS_CODE: ['PROTOCOL', 'the origin answered an unusable status'],
}

/** TLS error codes of Node (certificate and handshake failures). */
const TLS = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_(GET|VERIFY)_|HOSTNAME_MISMATCH|EPROTO$)/

function codeOf(e: unknown): string | undefined {
  for (let x: unknown = e, depth = 0; x && typeof x === 'object' && depth < 4; x = (x as { cause?: unknown }).cause, depth++) {
    if (x instanceof EdgeError) continue // the edge's own code names the edge's step, not the network's cause
    const c = (x as { code?: unknown }).code
    if (typeof c === 'string' && c !== '') return c
  }
  return undefined
}

/**
 * The cause of an origin failure (`e` as thrown by the origin client or the tool-list pull).
 * Codes: ECONNREFUSED, ECONNRESET, EHOSTUNREACH, ENETUNREACH, DNS, TLS, INVALID_URL, TIMEOUT,
 * TOO_LARGE, ABORTED, PROTOCOL, PULL (a step of the edge's tool-list pull failed: its text names
 * the step), NETWORK (a fetch failure with nothing more said, as workerd's "Network connection
 * lost."), ERROR, or the error's own code.
 */
export function originCause(e: unknown): OriginCause {
  if (e instanceof OriginTimeoutError) return { code: 'TIMEOUT', text: 'the origin did not answer within ORIGIN_TIMEOUT_MS' }
  if (e instanceof OriginReplyTooLargeError) return { code: 'TOO_LARGE', text: 'the origin reply exceeded MAX_REPLY_BYTES' }
  if (e instanceof PullError) return { code: 'PULL', text: `tool-list pull: ${e.message}` }
  const code = codeOf(e)
  if (code !== undefined) {
    const known = BY_CODE[code]
    if (known) return { code: known[0], text: known[1] }
    if (TLS.test(code)) return { code: 'TLS', text: `TLS with the origin failed (${code.slice(0, 48)})` }
    return { code: code.slice(0, 48), text: 'the origin call failed' }
  }
  if (e instanceof Error) {
    if (e.name === 'AbortError') return { code: 'ABORTED', text: 'the origin call was aborted (the client went away)' }
    if (e.name === 'TimeoutError') return { code: 'TIMEOUT', text: 'the origin did not answer in time' }
    if (e.name === 'SyntaxError') return { code: 'PROTOCOL', text: 'the origin reply is not JSON' }
    if (/invalid url/i.test(e.message)) return { code: 'INVALID_URL', text: 'the origin URL is not a valid URL' }
    // workerd's fetch says "Network connection lost." for a refused or reset connection, and no more.
    if (/network connection lost/i.test(e.message))
      return { code: 'NETWORK', text: 'network connection to the origin lost (refused or reset: the Workers runtime does not say which)' }
    if (/dns/i.test(e.message)) return { code: 'DNS', text: 'DNS lookup of the origin host failed' }
    if (/tls|ssl|certificate/i.test(e.message)) return { code: 'TLS', text: 'TLS with the origin failed' }
    if (e.name === 'TypeError' || e.constructor === Error) return { code: 'NETWORK', text: 'the network request to the origin failed' }
  }
  return { code: 'ERROR', text: 'the origin call failed' }
}
