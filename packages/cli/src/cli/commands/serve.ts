/**
 * @module cli/commands/serve
 * `mcp-edge serve`: the production edge on Node (docs/cli.md, docs/configuration.md). Every
 * variable of the configuration is also a flag (the flag wins); without an origin it refuses to
 * start unless `--demo` is given (then it starts the bundled demo origin and fronts it). On
 * SIGTERM/SIGINT it stops gracefully (adapters/node/graceful-stop.ts) and exits 0.
 *
 * Exit statuses: 0 after a graceful stop, 1 for a configuration or start-up error (one line on
 * stderr naming the variable or flag, the value and what is expected), 2 for a bad command line.
 */
import { redactUrl } from 'mcp-edge-validator/rules'
import { Option, type Command } from 'commander'
import { startEdge, type RunningEdge } from 'mcp-edge-validator/node'
import { loadNodeListenConfig } from 'mcp-edge-validator/node'
import { ConfigError, loadConfig } from 'mcp-edge-validator/rules'
import { readiness, unreadyOrigins } from 'mcp-edge-validator/rules'
import { storeFileState } from '../store-file-check'

/**
 * Every variable `serve` reads, with its flag (`--` + the name in lower case, `_` as `-`) and what
 * the flag takes. docs/configuration.md has defaults and examples; a test checks that every
 * variable core/config.ts reads is here.
 */
export const SERVE_VARIABLES: readonly { name: string; arg: string; help: string }[] = [
  { name: 'ORIGIN_URL', arg: 'url', help: 'MCP endpoint of the origin, served at /mcp (also --origin)' },
  { name: 'ORIGINS', arg: 'json', help: 'more origins by name, JSON {"name":"url"}, served at /mcp/<name>' },
  { name: 'HOST', arg: 'address', help: 'interface to listen on (default 127.0.0.1)' },
  { name: 'PORT', arg: 'port', help: 'TCP port to listen on (default 8787; 0 picks a free one)' },
  { name: 'STORE_FILE', arg: 'path', help: 'the embedded store on disk, one process per file (default .edge-data/kv.json; "memory" for none)' },
  { name: 'STORE_URL', arg: 'url', help: 'a store shared by several edges instead: redis://[user:password@]host[:port][/db] or rediss://' },
  { name: 'STORE_PREFIX', arg: 'prefix', help: 'prefix of the Redis keys of STORE_URL (default mcp-edge:)' },
  { name: 'ALLOWED_ORIGINS', arg: 'list', help: 'comma-separated browser Origin allow-list ("*" for any)' },
  { name: 'FORWARD_ORIGIN_HEADER', arg: 'on|off', help: "send the browser's Origin header on to the origin (default off: the edge applies ALLOWED_ORIGINS itself)" },
  { name: 'ALLOWED_HOSTS', arg: 'list', help: 'comma-separated Host allow-list ("localhost" = loopback names)' },
  { name: 'MAX_BODY_BYTES', arg: 'bytes', help: 'largest request body (413 above it; default 4194304)' },
  { name: 'MAX_BATCH', arg: 'n', help: 'largest batch (-32600 above it; default 100)' },
  { name: 'MAX_JSON_DEPTH', arg: 'n', help: 'deepest nesting of a request body or origin reply (default 64)' },
  { name: 'MAX_REPLY_BYTES', arg: 'bytes', help: 'largest origin reply or SSE event (-31001 above it; default 16777216)' },
  { name: 'ORIGIN_TIMEOUT_MS', arg: 'ms', help: 'origin deadline (-31002 after it; default 30000)' },
  { name: 'SCHEMA_TTL_S', arg: 's', help: 'tool schema freshness in seconds (default 300)' },
  { name: 'REFRESH_MIN_INTERVAL_MS', arg: 'ms', help: 'least time between two tool-list pulls per origin and scope (default 5000)' },
  { name: 'REFRESH_BUDGET_PER_MIN', arg: 'n', help: 'tool-list pulls per origin per minute (default 30)' },
  { name: 'TOOL_LIST_TIMEOUT_MS', arg: 'ms', help: "deadline of the edge's own tool-list pull (default 10000)" },
  { name: 'VALIDATION_BUDGET_MS', arg: 'ms', help: 'a call whose argument validation is estimated past this CPU time is answered as invalid arguments (default 50)' },
  { name: 'SCHEMA_RECHECK_MS', arg: 'ms', help: 'a rejection by a schema older than this is confirmed by one refresh first (default 30000)' },
  { name: 'STREAM_IDLE_MS', arg: 'ms', help: 'an SSE reply completing nothing for this long ends, open ids -31002 (default 300000; 0: no bound)' },
  { name: 'STREAM_MAX_MS', arg: 'ms', help: 'longest a relayed stream may last, open ids -31002 (default 3600000; 0: no bound)' },
  { name: 'VALIDATOR_CACHE_SIZE', arg: 'n', help: 'compiled validators kept in memory (default 1000)' },
  { name: 'PRIVATE_SCOPE_TTL_S', arg: 's', help: "seconds the store keeps a caller's private tool list after its last write (default 3600; at least 60)" },
  { name: 'MAX_PRIVATE_SCOPES', arg: 'n', help: 'private tool lists (one per caller) kept per origin, least recently used out first (default 1000)' },
  { name: 'INVALID_ARGS', arg: 'mode', help: 'auto | rpc-error | tool-error (default auto)' },
  { name: 'UNKNOWN_TOOL', arg: 'mode', help: 'reject | forward (default reject)' },
  { name: 'ON_SCHEMA_ERROR', arg: 'mode', help: 'forward | reject (default forward)' },
  { name: 'OUTPUT_SCHEMA', arg: 'mode', help: 'off | warn | strict (default warn)' },
  { name: 'HIDDEN_FAILURES', arg: 'on|off', help: 'add isError: true to results hiding a failure (default on)' },
  { name: 'SUPPORTED_VERSIONS', arg: 'list', help: 'protocol versions accepted, comma-separated (default all four)' },
  { name: 'ADMIN_TOKEN', arg: 'token', help: 'bearer token of the admin API (prefer the variable: a flag shows in ps)' },
  { name: 'MAX_CONNECTIONS', arg: 'n', help: 'client connections held at once; more are closed on accept (default 10000; keep it below ulimit -n)' },
  { name: 'HEADERS_TIMEOUT_MS', arg: 'ms', help: 'a client must send its request headers within this (408 after it; default 10000)' },
  { name: 'REQUEST_TIMEOUT_MS', arg: 'ms', help: 'a client must send its whole request within this (408 after it; default 30000)' },
  { name: 'KEEP_ALIVE_TIMEOUT_MS', arg: 'ms', help: 'an idle kept-alive client connection is closed after this (default 5000)' },
  { name: 'METRICS_TOKEN', arg: 'token', help: 'bearer token GET /metrics requires (default: open; prefer the variable)' },
  { name: 'SHUTDOWN_GRACE_MS', arg: 'ms', help: 'how long a stop waits for requests in flight (default 10000)' },
  { name: 'DEMO_PORT', arg: 'port', help: "the demo origin's port with --demo (default 3000)" },
]

/** `ORIGIN_URL` -> `--origin-url`. */
export function flagOf(variable: string): string {
  return `--${variable.toLowerCase().replaceAll('_', '-')}`
}

/** `--origin-url` -> the options key commander uses (`originUrl`). */
function keyOf(variable: string): string {
  return variable.toLowerCase().replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())
}

/** Registers `serve` on the program. */
export function addServeCommand(program: Command): void {
  const cmd = program
    .command('serve')
    .description('Run the edge on Node in front of one or more MCP origins (every option is also an environment variable; the flag wins).')
    .option('--origin <url>', 'MCP endpoint of the origin (same as --origin-url / ORIGIN_URL)')
    .option('--demo', 'with no origin given, start the bundled demo origin on DEMO_PORT and front it')
  for (const v of SERVE_VARIABLES) cmd.addOption(new Option(`${flagOf(v.name)} <${v.arg}>`, `${v.help} [${v.name}]`))
  cmd.addHelpText(
    'after',
    `
Exit statuses: 0 after a graceful stop (SIGTERM or SIGINT), 1 for a configuration or start-up
error (one line on stderr), 2 for a bad command line.

Examples:
  mcp-edge serve --origin http://127.0.0.1:9000/mcp
  ORIGIN_URL=https://tools.example.com/mcp PORT=8080 HOST=0.0.0.0 mcp-edge serve
  mcp-edge serve --demo`
  )
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    process.exitCode = await serve(opts)
  })
}

/**
 * Runs the edge until SIGTERM/SIGINT.
 * @returns the exit status (0 after a graceful stop, 1 when it could not start)
 */
async function serve(opts: Record<string, string | boolean | undefined>): Promise<number> {
  const env: Record<string, string | undefined> = { ...process.env }
  const fromFlag = new Set<string>()
  const set = (name: string, value: unknown) => {
    if (typeof value !== 'string') return
    env[name] = value
    fromFlag.add(name)
  }
  set('ORIGIN_URL', opts.origin)
  for (const v of SERVE_VARIABLES) set(v.name, opts[keyOf(v.name)])
  let demo: { url: string; close(): Promise<void> } | null = null
  let edge: RunningEdge
  try {
    const listen = loadNodeListenConfig(env)
    loadConfig(env) // every policy checked before anything starts
    if (!env.ORIGIN_URL && !env.ORIGINS) {
      if (!opts.demo) throw new ConfigError('no origin: set ORIGIN_URL (or --origin <url>), or ORIGINS, or give --demo to front the bundled demo origin')
      const { startDemoOrigin } = await import('../../../demo/origin')
      demo = await startDemoOrigin({ port: listen.demoPort, fixtures: true })
      env.ORIGIN_URL = demo.url
      process.stderr.write(`demo origin: ${demo.url}\n`)
    }
    // A STORE_FILE that exists and is not a store would be read as empty and written over (cli/store-file-check.ts).
    const storeFile = env.STORE_URL || env.STORE_FILE === 'memory' ? null : env.STORE_FILE || '.edge-data/kv.json'
    if (storeFile !== null && storeFileState(storeFile).kind === 'foreign')
      throw ConfigError.bad('STORE_FILE', storeFile, 'the path of an edge store file, or of a new one (this file exists and is not an edge store; it was left as it is)')
    edge = await startEdge({ env })
  } catch (e) {
    await demo?.close()
    process.stderr.write(`mcp-edge serve: ${startError(e, fromFlag)}\n`)
    return 1
  }
  const graceMs = loadNodeListenConfig(env).shutdownGraceMs
  const target = env.ORIGIN_URL ? redactUrl(env.ORIGIN_URL) : 'ORIGINS'
  process.stderr.write(`mcp-edge-validator: ${edge.url} -> ${target}\n`)
  // An origin URL with a wrong path answers 404 to every call: said once at start, not only by /readyz.
  void readiness(edge.deps).then(
    (report) => {
      for (const o of unreadyOrigins(edge.deps, report)) process.stderr.write(`mcp-edge serve: warning: ${o.variable}=${o.url}: ${o.answered}\n`)
    },
    () => undefined
  )
  await new Promise<void>((resolve) => {
    let stoppingSince = 0
    const onSignal = (signal: NodeJS.Signals) => {
      if (stoppingSince) {
        // Ctrl-C under `npm start` arrives twice at once (the terminal signals the process group,
        // and npm forwards its own copy): only a signal a second or more later means "stop now".
        if (Date.now() - stoppingSince < 1_000) return
        process.stderr.write(`mcp-edge serve: ${signal} again, exiting without waiting\n`)
        process.exit(1)
      }
      stoppingSince = Date.now()
      process.stderr.write(`mcp-edge serve: ${signal}, stopping (up to ${graceMs} ms for requests in flight)\n`)
      void edge
        .stop(graceMs)
        .then(() => demo?.close())
        .catch((e: unknown) => process.stderr.write(`mcp-edge serve: while stopping: ${oneLine(e)}\n`))
        .finally(resolve)
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  })
  return 0
}

/** A start-up failure as one line: a flag's name when the value came from a flag. */
function startError(e: unknown, fromFlag: Set<string>): string {
  if (e instanceof ConfigError && e.variable && e.shown !== undefined && e.expected !== undefined) {
    const base = e.variable.split('.')[0]!
    if (fromFlag.has(base)) return `${base === 'ORIGIN_URL' ? '--origin' : flagOf(base)} ${e.shown}: expected ${e.expected}`
  }
  return oneLine(e)
}

/** An error's message, first line only (never a stack trace). */
function oneLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e)
  return text.split('\n')[0]!
}
