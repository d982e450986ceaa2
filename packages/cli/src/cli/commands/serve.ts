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
import { loadNodeConfig, startEdge, type RunningEdge } from 'mcp-edge-validator/node'
import { ConfigError, loadConfig } from 'mcp-edge-validator/rules'
import { readiness, unreadySources } from 'mcp-edge-validator/rules'
import { SETTINGS, flagHelp, flagOf } from 'mcp-edge-validator/rules'
import { governanceOf, governanceText, unknownVariables, unknownVariableText } from 'mcp-edge-validator/rules'
import { storeFileState } from '../store-file-check'

/** Every setting `serve` reads, with its flag (core/settings.ts: `--` + the name in lower case, `_` as `-`) and what the flag takes. */
export const SERVE_VARIABLES: readonly { name: string; arg: string; help: string }[] = SETTINGS.map((s) => ({ name: s.variable, arg: s.arg, help: flagHelp(s) }))

export { flagOf }

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
  for (const v of SERVE_VARIABLES) cmd.addOption(new Option(`${flagOf(v.name)} <${v.arg}>`, v.help))
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
    // The Node entry's settings, read as startEdge reads them (one reader: loadNodeConfig).
    const node = loadNodeConfig(env)
    loadConfig(env) // every policy checked before anything starts
    if (!env.ORIGIN_URL && !env.ORIGINS) {
      if (!opts.demo) throw new ConfigError('no origin: set ORIGIN_URL (or --origin <url>), or ORIGINS, or give --demo to front the bundled demo origin')
      const { startDemoOrigin } = await import('../../../demo/origin')
      demo = await startDemoOrigin({ port: node.demoPort, fixtures: true })
      env.ORIGIN_URL = demo.url
      process.stderr.write(`demo origin: ${demo.url}\n`)
    }
    // A STORE_FILE that exists and is not a store would be read as empty and written over (cli/store-file-check.ts).
    const storeFile = node.storeUrl !== null || node.storeFile === 'memory' ? null : node.storeFile
    const state = storeFile === null ? null : storeFileState(storeFile)
    if (storeFile !== null && state?.kind === 'foreign')
      throw ConfigError.bad(
        'STORE_FILE',
        storeFile,
        `the path of an edge store file, or of a new one (this file exists and is not an edge store; it was left as it is${state.hint ? `; ${state.hint}` : ''})`
      )
    edge = await startEdge({ env })
  } catch (e) {
    await demo?.close()
    process.stderr.write(`mcp-edge serve: ${startError(e, fromFlag)}\n`)
    return 1
  }
  const graceMs = edge.nodeConfig.shutdownGraceMs
  const target = env.ORIGIN_URL ? redactUrl(env.ORIGIN_URL) : 'ORIGINS'
  // The signal handlers exist before the start line is written: a supervisor that reads the line
  // and stops the edge at once must get the graceful stop, not the default exit.
  const stopped = new Promise<void>((resolve) => {
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
  process.stderr.write(`mcp-edge-validator: ${edge.url} -> ${target}\n`)
  // Start-up truth: the governance in force, and every variable of the edge's namespaces that is no
  // setting (a typo such as TOOL_PINING would otherwise leave the edge in audit, in silence).
  process.stderr.write(`mcp-edge serve: governance: ${governanceText(governanceOf(edge.deps.config, edge.storeName))}\n`)
  for (const u of unknownVariables(env)) process.stderr.write(`mcp-edge serve: warning: ${unknownVariableText(u)}\n`)
  for (const line of shortTokenWarnings(env)) process.stderr.write(`mcp-edge serve: warning: ${line}\n`)
  // An origin URL with a wrong path answers 404 to every call, a wrong AUTH_JWKS_URL makes every
  // request 503: said once at start (the first readiness check reads the key set), not only by /readyz.
  void readiness(edge.deps).then(
    (report) => {
      for (const o of unreadySources(edge.deps, report)) process.stderr.write(`mcp-edge serve: warning: ${o.variable}=${o.url}: ${o.answered}\n`)
    },
    () => undefined
  )
  await stopped
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

/** Bearer tokens shorter than this get a start warning (characters): 16 random b64token characters are about 96 bits. */
export const SHORT_TOKEN_CHARS = 16

/**
 * One warning per token setting shorter than {@link SHORT_TOKEN_CHARS}, naming the variable and
 * never the value (nor its length). A warning, not an error: a deployment that runs with a short
 * token today keeps starting after an upgrade.
 */
export function shortTokenWarnings(env: Record<string, string | undefined>): string[] {
  const out: string[] = []
  for (const name of ['ADMIN_TOKEN', 'METRICS_TOKEN']) {
    const v = env[name]
    if (v !== undefined && v !== '' && v.length < SHORT_TOKEN_CHARS)
      out.push(`${name} is shorter than ${SHORT_TOKEN_CHARS} characters (value not shown), so it can be guessed: use a random one, e.g. openssl rand -hex 32`)
  }
  return out
}
