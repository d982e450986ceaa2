/**
 * @module adapters/node/node-config
 * The Node entry's own variables (where it listens, how long a stop may take, the demo origin's
 * port) and the one-line errors it starts with (docs/configuration.md). The edge's policies are
 * read by core/config.ts; the store's variables by the store module.
 */
import { ConfigError, intVar } from '../../core/config'
import { EdgeError } from '../../core/errors'

/** Default of `SHUTDOWN_GRACE_MS`: how long a stop waits for requests and SSE streams in flight. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000

/** Where and how the Node edge runs. */
export interface NodeListenConfig {
  /** Interface to listen on (`HOST`, default 127.0.0.1). */
  host: string
  /** TCP port (`PORT`, default 8787; 0 picks a free one). */
  port: number
  /** Milliseconds a graceful stop waits for requests in flight (`SHUTDOWN_GRACE_MS`). */
  shutdownGraceMs: number
  /** Port of the bundled demo origin (`DEMO_PORT`, default 3000; `--demo` only). */
  demoPort: number
}

function port(env: Record<string, string | undefined>, name: string, def: number): number {
  return intVar(env, name, def, { min: 0, max: 65535, expected: 'a TCP port number from 0 to 65535' })
}

/**
 * Reads `HOST`, `PORT`, `SHUTDOWN_GRACE_MS` and `DEMO_PORT` (unset or empty: the default).
 * @throws ConfigError naming the variable and the value
 */
export function loadNodeListenConfig(env: Record<string, string | undefined>): NodeListenConfig {
  const host = env.HOST === undefined || env.HOST === '' ? '127.0.0.1' : env.HOST
  // An IPv6 literal, or a host name / IPv4 address as `new URL` accepts it.
  const hostOk = host.includes(':') ? /^[0-9a-fA-F:.]+$/.test(host) : URL.canParse(`http://${host}/`) && !/[/?#@\s]/.test(host)
  if (!hostOk) throw ConfigError.bad('HOST', host, 'an interface address or host name, such as 127.0.0.1, 0.0.0.0 or ::')
  const shutdownGraceMs = intVar(env, 'SHUTDOWN_GRACE_MS', DEFAULT_SHUTDOWN_GRACE_MS, { min: 0, expected: 'an integer >= 0 (milliseconds)' })
  return { host, port: port(env, 'PORT', 8787), shutdownGraceMs, demoPort: port(env, 'DEMO_PORT', 3000) }
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
