/**
 * @module adapters/node/node-config
 * The Node entry's own settings (where it listens, how long a stop may take, the demo origin's
 * port, the store, the connection bounds: the `node` rows of core/settings.ts) and the one-line
 * errors it starts with (docs/configuration.md). The edge's policies are read by core/config.ts.
 */
import { readSettings, settingsOf, type SettingKey } from '../../core/settings'
import { EdgeError } from '../../core/errors'
import { ConfigError, showValue } from '../../core/config'

/** Default of `SHUTDOWN_GRACE_MS`: how long a stop waits for requests and SSE streams in flight. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000

/** The Node entry's own settings (the `node` rows of core/settings.ts). Units in the names. */
export interface NodeConfig {
  /** Interface to listen on (`HOST`, default 127.0.0.1). */
  host: string
  /** TCP port (`PORT`, default 8787; 0 picks a free one). */
  port: number
  /** Milliseconds a graceful stop waits for requests in flight (`SHUTDOWN_GRACE_MS`). */
  shutdownGraceMs: number
  /** Port of the bundled demo origin (`DEMO_PORT`, default 3000; `--demo` only). */
  demoPort: number
  /** The embedded store's file, or `memory` (`STORE_FILE`, default .edge-data/kv.json). */
  storeFile: string
  /** The shared Redis store (`STORE_URL`); null: the embedded one. */
  storeUrl: string | null
  /** Prefix of the Redis keys (`STORE_PREFIX`, default mcp-edge:). */
  storePrefix: string
  /** Client connections held at once (`MAX_CONNECTIONS`). */
  maxConnections: number
  /** Request line and headers deadline, ms (`HEADERS_TIMEOUT_MS`). */
  headersTimeoutMs: number
  /** Whole request deadline, ms (`REQUEST_TIMEOUT_MS`). */
  requestTimeoutMs: number
  /** Idle kept-alive connection bound, ms (`KEEP_ALIVE_TIMEOUT_MS`). */
  keepAliveTimeoutMs: number
}

/** The typed form of the Node entry's settings: each key the option of one `node` row of core/settings.ts. */
export type NodeServerOptions = Partial<NodeConfig>

// Every NodeConfig field is a `node` row of the table and every `node` row a NodeConfig field.
type MissingRow = Exclude<keyof NodeConfig, SettingKey<'node'>>
type MissingField = Exclude<SettingKey<'node'>, keyof NodeConfig>
const _everyFieldHasARow: [MissingRow, MissingField] extends [never, never] ? true : { missingRow: MissingRow; missingField: MissingField } = true
void _everyFieldHasARow

/**
 * Reads the Node entry's settings: each from its typed option when given, else its variable
 * (unset or empty: the default), by the rules of core/settings.ts; then the two rules between
 * settings: `REQUEST_TIMEOUT_MS` at least `HEADERS_TIMEOUT_MS` (the request deadline includes the
 * headers), and not both `STORE_URL` and `STORE_FILE`.
 * @throws ConfigError naming the variable (or the option and its variable) and the value
 */
export function loadNodeConfig(env: Record<string, unknown>, options: NodeServerOptions = {}): NodeConfig {
  const given = options as Record<string, unknown>
  const config = readSettings(settingsOf('node'), env, (s) => given[s.option]) as unknown as NodeConfig
  if (config.requestTimeoutMs < config.headersTimeoutMs)
    throw ConfigError.bad(
      'REQUEST_TIMEOUT_MS',
      String(config.requestTimeoutMs),
      `at least HEADERS_TIMEOUT_MS (${config.headersTimeoutMs}): the request deadline includes the headers`
    )
  // The file was given (as an option or a non-empty variable), not left at its default.
  const file = typeof given.storeFile === 'string' && given.storeFile !== '' ? given.storeFile : typeof env.STORE_FILE === 'string' && env.STORE_FILE !== '' ? env.STORE_FILE : null
  if (config.storeUrl !== null && file !== null)
    throw new ConfigError(
      `STORE_URL and STORE_FILE are both set (STORE_FILE=${showValue(file)}): set STORE_URL for a shared store or STORE_FILE for the embedded one, not both`,
      'STORE_URL'
    )
  return config
}

/** Where and how the Node edge runs. */
export type NodeListenConfig = Pick<NodeConfig, 'host' | 'port' | 'shutdownGraceMs' | 'demoPort'>

/**
 * Reads `HOST`, `PORT`, `SHUTDOWN_GRACE_MS` and `DEMO_PORT` (unset or empty: the default).
 * @throws ConfigError naming the variable and the value
 */
export function loadNodeListenConfig(env: Record<string, string | undefined>): NodeListenConfig {
  const { host, port, shutdownGraceMs, demoPort } = loadNodeConfig(env)
  return { host, port, shutdownGraceMs, demoPort }
}

/**
 * The edge could not start listening; the message is one line (the address, the code and what to
 * do), e.g. `PORT=8787: 127.0.0.1:8787 is already in use (EADDRINUSE): ...`.
 */
export class ListenError extends EdgeError {
  override readonly name = 'ListenError'
  override readonly code = 'EDGE_ERR_LISTEN'
}

/** A `listen` failure as a {@link ListenError} (EADDRINUSE, EACCES, EADDRNOTAVAIL), other errors as they are. */
export function listenError(err: unknown, host: string, portNumber: number): unknown {
  const code = (err as { code?: unknown } | null)?.code
  const where = `${host.includes(':') ? `[${host}]` : host}:${portNumber}`
  if (code === 'EADDRINUSE') return new ListenError(`PORT=${portNumber}: ${where} is already in use (EADDRINUSE): stop the process that holds it or choose another PORT`)
  if (code === 'EACCES') return new ListenError(`PORT=${portNumber}: no permission to listen on ${where} (EACCES): ports below 1024 need privileges; choose a PORT from 1024 up`)
  if (code === 'EADDRNOTAVAIL') return new ListenError(`HOST=${host}: ${where} is not an address of this machine (EADDRNOTAVAIL): choose another HOST`)
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ListenError(`HOST=${host}: the host name does not resolve (${String(code)}): choose another HOST`)
  return err
}
