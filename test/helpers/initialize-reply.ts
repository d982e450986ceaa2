/**
 * The answer a test origin gives to an MCP `initialize` request, written once: the scripted origins
 * of the tests (and the helpers' own servers) build it here instead of each spelling out the
 * JSON-RPC response. The members keep the order every origin wrote them in (`jsonrpc`, `id`,
 * `result`; `protocolVersion`, `capabilities`, `serverInfo`), so the bytes on the wire are as before.
 */

/** What an origin answers to `initialize`; every member has the default most test origins use. */
export interface InitializeReplyOptions {
  /** A fixed protocol version to answer, whatever the request asked for. Default `2025-06-18`. */
  version?: string
  /**
   * Answer the version the request names instead of a fixed one: `true` echoes it as it is (absent
   * when the request names none), a string is the version answered when the request names none.
   * Takes precedence over `version`.
   */
  echo?: true | string
  /** The `capabilities` answered. Default `{ tools: {} }`. */
  capabilities?: Record<string, unknown>
  /** The `serverInfo` answered. Default `{ name: 'o', version: '1' }`. */
  serverInfo?: { name: string; version: string }
}

/** The parts of an `initialize` request the answer depends on: its id, and `params.protocolVersion` (the version it asks for). */
export interface InitializeRequestLike {
  id?: unknown
  params?: unknown
}

/** The `result` of the answer to `request` (see {@link InitializeReplyOptions} for the defaults). */
export function initializeResult(
  request: InitializeRequestLike,
  options: InitializeReplyOptions = {}
): { protocolVersion: unknown; capabilities: Record<string, unknown>; serverInfo: { name: string; version: string } } {
  const { echo } = options
  const protocolVersion =
    echo === undefined ? (options.version ?? '2025-06-18') : ((request.params as { protocolVersion?: unknown } | undefined)?.protocolVersion ?? (echo === true ? undefined : echo))
  return { protocolVersion, capabilities: options.capabilities ?? { tools: {} }, serverInfo: options.serverInfo ?? { name: 'o', version: '1' } }
}

/** The whole JSON-RPC response to `request`: `{ jsonrpc: '2.0', id, result }` with {@link initializeResult}. */
export function initializeReply(
  request: InitializeRequestLike,
  options: InitializeReplyOptions = {}
): { jsonrpc: '2.0'; id: unknown; result: ReturnType<typeof initializeResult> } {
  return { jsonrpc: '2.0', id: request.id, result: initializeResult(request, options) }
}
