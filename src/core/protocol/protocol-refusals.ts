/**
 * @module core/protocol/protocol-refusals
 * The refusals of the protocol-version and standard-header rules, as {@link ProtocolRefusal}
 * values (src/core/local-answer.ts maps them to the wire): -32022 unsupported version and -32020
 * header mismatch, both 400 (docs/design.md D14; docs/protocol-rules.md M12). Pure.
 */
import { newestFirst, type ProtocolVersion } from '../jsonrpc/versions'
import { ErrorCode, type RawId } from '../jsonrpc/jsonrpc'
import type { ProtocolRefusal } from '../local-answer'
import { boundText } from '../jsonrpc/bound-text'

/** A {@link ProtocolRefusal} with `status` and one error for `id`; `data` only when given. */
export function refuse(status: number, id: RawId, code: number, message: string, data?: unknown): ProtocolRefusal {
  return { kind: 'protocol', status, id, error: { code, message, ...(data !== undefined ? { data } : {}) } }
}

/**
 * 400 -32022 with `data: { supported, requested }` (D14; docs/protocol-rules.md M12). `requested` is
 * clipped to 64 characters; the message lists the supported versions, newest first.
 */
export function unsupportedVersion(id: RawId, requested: unknown, supported: readonly ProtocolVersion[]): ProtocolRefusal {
  const list = newestFirst(supported)
  const req = boundText(typeof requested === 'string' ? requested : String(requested === undefined ? '' : (JSON.stringify(requested) ?? '')), 64, '')
  return refuse(400, id, ErrorCode.UnsupportedVersion, `Unsupported protocol version. Supported versions: ${list.join(', ')}`, { supported: list, requested: req })
}

/** 400 -32020 `Header mismatch: <what>` (a standard header disagrees with the body, or is missing). */
export function headerMismatch(id: RawId, what: string): ProtocolRefusal {
  return refuse(400, id, ErrorCode.HeaderMismatch, `Header mismatch: ${what}`)
}
