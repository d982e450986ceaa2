/**
 * @module core/errors
 * The errors the edge throws, one vocabulary (docs/errors.md "Thrown errors"): every one is an
 * {@link EdgeError} with a `name` (the class) and a stable `code` that callers branch on instead of
 * matching message texts, as undici does with its `UND_ERR_*` codes. Messages are for people and
 * may change; codes do not. The classes stay beside the code that throws them (a store's errors in
 * its store); this file holds the base, the list of codes and the errors of the core's own steps.
 */

/**
 * Every code an {@link EdgeError} carries. Stable: a code is never reused for another meaning.
 * - `EDGE_ERR_CONFIG`: a setting is missing or has a bad value (start-up, {@link ConfigError} in ./config.ts)
 * - `EDGE_ERR_SCHEMA_UNUSABLE`: a validator engine cannot use a schema (ports.ts `SchemaUnusableError`)
 * - `EDGE_ERR_PATTERN_UNUSABLE`: a `pattern` the linear-time engine cannot run (patterns/linear-pattern.ts)
 * - `EDGE_ERR_ORIGIN_TIMEOUT`: the origin did not answer within ORIGIN_TIMEOUT_MS (ports.ts)
 * - `EDGE_ERR_ORIGIN_REPLY_TOO_LARGE`: the origin's body exceeded MAX_REPLY_BYTES (ports.ts)
 * - `EDGE_ERR_ORIGIN_READ_STOPPED`: the edge stopped reading an origin body (Node origin client, internal)
 * - `EDGE_ERR_PULL`: a step of the edge's own tool-list pull failed ({@link PullError}, `step` says which)
 * - `EDGE_ERR_STORE_UNAVAILABLE`: the KV namespace failed (validation/store-reads.ts)
 * - `EDGE_ERR_STORE_CANNOT_LIST`: the store has no `list` (validation/tool-store.ts)
 * - `EDGE_ERR_PINS_UNREADABLE`: the stored tool pins do not decode (pinning/pin-store.ts; enforce fails closed)
 * - `EDGE_ERR_STORE_FILE`: the store file cannot be used (stores/file-kv.ts)
 * - `EDGE_ERR_STORE_LOCKED`: the store file is locked by a live process (stores/store-lock.ts)
 * - `EDGE_ERR_STORE_CONNECT`: Redis could not be reached at start (stores/redis-kv.ts)
 * - `EDGE_ERR_LISTEN`: the Node server could not listen (adapters/node/node-config.ts)
 * - `EDGE_ERR_SETTING_REFUSED`: one setting's rule refused a value (core/settings.ts, internal: always turned into a ConfigError)
 * - `EDGE_ERR_JWKS_UNAVAILABLE`: the JWKS could not be fetched (auth/jwt-verifier.ts, internal)
 * - `EDGE_ERR_JWKS_READ`: one read of the JWKS failed: an error status, no answer, too large, not a key set, or not made within the cooldown of a failed one (auth/jwt-verifier.ts, internal)
 * - `EDGE_ERR_CHECK_REPLY_TOO_LARGE`: `mcp-edge check` read more than 1 MiB of one body (check/runner.ts)
 * - `EDGE_ERR_CHECK_AUTHORIZATION`: `mcp-edge check`'s handshake was answered 401 (check/session.ts; reported as a row)
 * - `EDGE_ERR_CLI_FAILED`, `EDGE_ERR_CLI_USAGE`: `mcp-edge schemas` failed (exit 1) or was misused (exit 2)
 * - `EDGE_ERR_CLI_TOOLS`: `mcp-edge tools` refused or failed (its exit status on the error: 1, 2 or 3)
 */
export type EdgeErrorCode =
  | 'EDGE_ERR_CONFIG'
  | 'EDGE_ERR_SETTING_REFUSED'
  | 'EDGE_ERR_SCHEMA_UNUSABLE'
  | 'EDGE_ERR_PATTERN_UNUSABLE'
  | 'EDGE_ERR_ORIGIN_TIMEOUT'
  | 'EDGE_ERR_ORIGIN_REPLY_TOO_LARGE'
  | 'EDGE_ERR_ORIGIN_READ_STOPPED'
  | 'EDGE_ERR_PULL'
  | 'EDGE_ERR_STORE_UNAVAILABLE'
  | 'EDGE_ERR_STORE_CANNOT_LIST'
  | 'EDGE_ERR_PINS_UNREADABLE'
  | 'EDGE_ERR_STORE_FILE'
  | 'EDGE_ERR_STORE_LOCKED'
  | 'EDGE_ERR_STORE_CONNECT'
  | 'EDGE_ERR_LISTEN'
  | 'EDGE_ERR_JWKS_UNAVAILABLE'
  | 'EDGE_ERR_JWKS_READ'
  | 'EDGE_ERR_CHECK_REPLY_TOO_LARGE'
  | 'EDGE_ERR_CHECK_AUTHORIZATION'
  | 'EDGE_ERR_CLI_FAILED'
  | 'EDGE_ERR_CLI_USAGE'
  | 'EDGE_ERR_CLI_TOOLS'

/**
 * The base of every error the edge throws. A subclass sets `name` (its class name, written out so
 * that a minified bundle keeps it) and `code` (one of {@link EdgeErrorCode}) as fields.
 * @example if (e instanceof EdgeError && e.code === 'EDGE_ERR_CONFIG') process.exitCode = 2
 */
export abstract class EdgeError extends Error {
  override readonly name: string = 'EdgeError'
  abstract readonly code: EdgeErrorCode
}

/**
 * The steps of the edge's own tool-list pull (forwarding/tool-list-pull.ts and the registry), each
 * with its message: the message names the step and never carries data from the origin.
 */
export const PULL_STEPS = {
  'empty-stream': 'empty stream',
  'stream-ended': 'stream ended without the response',
  'nests-too-deep': 'the reply nests too deep',
  'no-response': 'no response for the id',
  status: 'status',
  initialize: 'initialize failed',
  'tools-list': 'tools/list failed',
  'private-without-scope': 'a private tool list without a caller scope',
  refused: 'a reply guard refused the list',
} as const

/** One step of the tool-list pull, see {@link PULL_STEPS}. */
export type PullStep = keyof typeof PULL_STEPS

/**
 * A step of the edge's own tool-list pull failed (`code` `EDGE_ERR_PULL`); `step` says which. The
 * message is the step's text, with the origin's HTTP status for `status` (`status 500`), so a log
 * line reads `tool-list pull: status 500`.
 */
export class PullError extends EdgeError {
  override readonly name = 'PullError'
  override readonly code = 'EDGE_ERR_PULL'
  /**
   * @param step the step that failed
   * @param status the origin's HTTP status, for `step` `status`
   */
  constructor(
    readonly step: PullStep,
    readonly status?: number
  ) {
    super(step === 'status' ? `status ${status}` : PULL_STEPS[step])
  }
}
