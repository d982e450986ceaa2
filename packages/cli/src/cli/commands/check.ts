/**
 * @module cli/commands/check
 * `mcp-edge check <mcp-url>`: grades an MCP server the way an agent would be fooled (the library
 * is src/check; docs/check.md is the reference: every case, its rule and source, grades, exit
 * statuses, flags). This file parses and checks the command line, runs the check (and, with
 * `--through`, the same check through an edge), prints the rows and sets the exit status.
 */
import type { Command } from 'commander'
import { printable, quoted } from '../../check/reply'
import { toJunit } from '../../check/junit'
import { toMarkdown } from '../../check/markdown'
import { exitStatus, formatLines, formatTable, pairRows, summaryLine, toJson } from '../../check/report'
import { CHECK_VERSIONS, OLDEST_VERSION, VERSION_CHOICES, DEFAULT_MAX_REQUESTS, DEFAULT_TIMEOUT_MS, runCheck, type CheckOptions, type CheckProgress } from '../../check/runner'
import type { ProtocolVersion } from '../../check/edge-rules'

/** Options as commander hands them over. */
interface RawOptions {
  version: string[]
  tool: string[]
  call: string[]
  callAll?: boolean
  header: string[]
  token?: string
  timeout: string
  maxRequests: string
  through?: string
  strict?: boolean
  json?: boolean
  format?: string
}

const collect = (value: string, previous: string[]) => [...previous, value]

/** A value as shown in an error message: quoted, one line, at most 80 characters. */
const shown = (v: string) => quoted(v, 80)

/** Narrowest terminal the table is printed on (columns). */
const TABLE_MIN_COLUMNS = 100

/** The output formats of `--format`. */
const FORMATS = ['table', 'lines', 'json', 'junit', 'markdown'] as const
type Format = (typeof FORMATS)[number]

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** Parses the command line's values; throws an Error whose message names the option and the value. */
function parseOptions(url: string, o: RawOptions): { url: string; through?: string; options: Omit<CheckOptions, 'url'>; strict: boolean; format: Format } {
  const httpUrl = (name: string, v: string) => {
    let u: URL
    try {
      u = new URL(v)
    } catch {
      throw new Error(`${name} must be an http or https URL, got ${shown(v)}`)
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${name} must be an http or https URL, got ${shown(v)}`)
    return u.href
  }
  const integer = (name: string, v: string, min: number, max: number) => {
    const n = Number(v)
    if (!/^\d+$/.test(v) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got ${shown(v)}`)
    return n
  }
  const versions = o.version.map((v) => {
    if (!(VERSION_CHOICES as readonly string[]).includes(v)) {
      throw new Error(`--version must be one of ${VERSION_CHOICES.join(', ')}, got ${shown(v)}`)
    }
    return v as ProtocolVersion
  })
  const headers: Record<string, string> = {}
  for (const h of o.header) {
    const i = h.indexOf(':')
    const name = i > 0 ? h.slice(0, i).trim() : ''
    const value = i > 0 ? h.slice(i + 1).trim() : ''
    if (!TOKEN.test(name) || /[\r\n\0]/.test(value)) throw new Error(`--header must look like 'Name: value', got ${shown(h)}`)
    headers[name.toLowerCase()] = value
  }
  if (o.token !== undefined) {
    // The token itself is never shown: not in this message, not in the report.
    if (headers.authorization !== undefined) throw new Error('give --token or an Authorization --header, not both')
    if (!/^[A-Za-z0-9\-._~+/]+=*$/.test(o.token)) throw new Error('--token must be an access token (RFC 6750 b64token: A-Z a-z 0-9 - . _ ~ + / and trailing =); value not shown')
    headers.authorization = `Bearer ${o.token}`
  }
  const format = o.json ? 'json' : (o.format ?? (process.stdout.isTTY ? 'table' : 'lines'))
  if (!(FORMATS as readonly string[]).includes(format)) throw new Error(`--format must be one of ${FORMATS.join(', ')}, got ${shown(format)}`)
  return {
    url: httpUrl('mcp-url', url),
    ...(o.through !== undefined ? { through: httpUrl('--through', o.through) } : {}),
    options: {
      ...(versions.length ? { versions: [...new Set(versions)] } : {}),
      ...(o.tool.length ? { tools: o.tool } : {}),
      call: o.call,
      callAll: Boolean(o.callAll),
      headers,
      timeoutMs: integer('--timeout', o.timeout, 1, 600_000),
      maxRequests: integer('--max-requests', o.maxRequests, 1, 100_000),
    },
    strict: Boolean(o.strict),
    format: format as Format,
  }
}

/** Progress on stderr, rewritten in place (only when stderr is a terminal). */
function progressWriter(): { report: (p: CheckProgress) => void; clear: () => void } {
  if (!process.stderr.isTTY) return { report: () => undefined, clear: () => undefined }
  return {
    report: (p) =>
      process.stderr.write(`\r\x1b[K${printable(`checking ${p.url} ${p.version}: ${p.step} (${p.sent}/${p.maxRequests} requests)`, (process.stderr.columns ?? 80) - 1)}`),
    clear: () => process.stderr.write('\r\x1b[K'),
  }
}

/** Adds `check` to the program. */
export function addCheckCommand(program: Command): void {
  program
    .command('check')
    .description(
      'Grade an MCP server: send it the client mistakes and calls an agent makes, and show, per case, what it answered, what the specs require, and whether it misleads an agent.'
    )
    .argument('<mcp-url>', 'the MCP endpoint, e.g. http://127.0.0.1:3000/mcp')
    .option(
      '--version <version>',
      `protocol version to check: ${VERSION_CHOICES.join(', ')} (repeatable; default: each of ${CHECK_VERSIONS.join(', ')} the server speaks, and ${OLDEST_VERSION} when the server answers it)`,
      collect,
      []
    )
    .option('--tool <name>', 'check only this tool (repeatable)', collect, [])
    .option('--call <name>', 'tool safe to call: it gets one call with valid generated arguments (repeatable; never by default)', collect, [])
    .option('--call-all', 'call every listed tool with valid generated arguments (tools can have side effects)')
    .option('--header <header>', "request header 'Name: value' on every request, e.g. for authenticated servers (repeatable)", collect, [])
    .option('--token <token>', 'OAuth access token for a server that requires authorization: sent as Authorization: Bearer <token> on every request (never printed)')
    .option('--timeout <ms>', 'time one request may take, in ms', String(DEFAULT_TIMEOUT_MS))
    .option('--max-requests <n>', 'upper bound of the requests sent to each URL (the SDK handshake included)', String(DEFAULT_MAX_REQUESTS))
    .option('--through <edge-url>', 'also check the same server through an mcp-edge in front of it, side by side (the exit status then follows the edge)')
    .option('--strict', 'exit 1 when a row fails the spec, not only when one misleads')
    .option('--json', 'print one JSON document (for CI)')
    .option('--format <format>', 'table | lines | json | junit (JUnit XML for CI test reports) | markdown (a CI job summary); default: table on a terminal, lines otherwise')
    .addHelpText(
      'after',
      '\nExit status: 0 nothing misleads (with --strict: nor fails the spec), 1 something does, 2 bad command line,\n3 could not connect (no handshake succeeded), 4 request budget reached before every case ran.\nReference: docs/check.md'
    )
    .action(async (url: string, raw: RawOptions, cmd: Command) => {
      let parsed
      try {
        parsed = parseOptions(url, raw)
      } catch (err) {
        cmd.error(`error: ${(err as Error).message}`, { exitCode: 2, code: 'mcp-edge.usage' })
      }
      if (parsed.options.callAll)
        process.stderr.write('warning: --call-all calls every listed tool with generated arguments; tools can have side effects (use --call NAME for the ones known to be safe)\n')
      const progress = progressWriter()
      const common = {
        ...parsed.options,
        canary: `mcp-edge-check-canary-${crypto.randomUUID().slice(0, 8)}`,
        clientVersion: program.version() ?? '0.0.0',
        onProgress: progress.report,
      }
      const direct = await runCheck({ url: parsed.url, ...common })
      const through = parsed.through !== undefined ? await runCheck({ url: parsed.through, ...common }) : undefined
      progress.clear()
      const status = exitStatus(direct, through, parsed.strict)
      const pairs = pairRows(direct, through)
      if (parsed.format === 'json') process.stdout.write(toJson(direct, through, status))
      else if (parsed.format === 'junit') process.stdout.write(toJunit(direct, through, pairs, status))
      else if (parsed.format === 'markdown') process.stdout.write(toMarkdown(direct, through, pairs, status))
      else {
        // Width: the terminal's, else $COLUMNS, else 160. Under TABLE_MIN_COLUMNS the columns get too narrow to read: the plain lines are printed instead.
        const width = process.stdout.columns ?? (Number(process.env.COLUMNS) || 160)
        const body =
          parsed.format === 'table' && width >= TABLE_MIN_COLUMNS ? formatTable(pairs, width, Boolean(process.stdout.isTTY) && !process.env.NO_COLOR) : formatLines(pairs)
        process.stdout.write(body + summaryLine(direct, through))
      }
      process.exitCode = status
    })
}
