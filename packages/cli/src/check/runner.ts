/**
 * @module check/runner
 * The run of `mcp-edge check` against one MCP endpoint: for each protocol version, the handshake
 * (./session), `tools/list`, then the cases of ./case-table sent as raw HTTP POSTs on the same
 * session (./http; so every byte of each client mistake is the one check meant to send), every
 * answer judged by its case, then `tools/list` again, its tool set compared with the first by
 * tool digest (./cases/tool-set). Never throws for anything the server does; every request is bounded
 * in time (`timeoutMs`) and the run in number of requests (`maxRequests`).
 */
import { validArguments } from './arguments'
import {
  buildRequest,
  contentTypeRow,
  authorizationRow,
  handshakeRow,
  notCalledRow,
  planCases,
  schemaRow,
  toolsListRow,
  toolSetRow,
  unlistedToolRow,
  type CaseRow,
  type ToolListing,
  type ToolUnderCheck,
} from './case-table'
import { isModern, isObject, type ProtocolVersion } from './edge-rules'
import { headOnly, postOnce, RequestBudget } from './http'
import { printable, replyFor, type HttpAnswer } from './reply'
import { safeRowText } from './safe-text'
import { listedTools, reportSchema, type ListedTool } from './schemas'
import { AuthorizationRequired, handshake, modernHandshake, sdkError, type Session } from './session'

export { ReplyTooLargeError } from './http'

/**
 * The protocol versions check grades by default, newest first: 2026-07-28 through the official
 * SDK v2 client (@modelcontextprotocol/client), the 2025 revisions through the SDK v1 client.
 */
export const CHECK_VERSIONS: readonly ProtocolVersion[] = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']

/**
 * 2024-11-05, the version of the archived reference servers (docs/protocol-rules.md §7): checked
 * when `--version` asks for it, and by default when a server answered it to a 2025 offer (so a
 * server that speaks only 2024-11-05 is graded, and one that speaks 2025 is not checked twice).
 */
export const OLDEST_VERSION: ProtocolVersion = '2024-11-05'

/** Every version `--version` accepts, newest first. */
export const VERSION_CHOICES: readonly ProtocolVersion[] = [...CHECK_VERSIONS, OLDEST_VERSION]

/** Default upper bound of the HTTP requests one run sends to one URL. */
export const DEFAULT_MAX_REQUESTS = 400
/** Default time one request may take, headers and body, in ms. */
export const DEFAULT_TIMEOUT_MS = 10_000
/** Upper bound of `tools/list` pages read per version. */
export const MAX_LIST_PAGES = 20

/** Progress of a run, reported after each request. */
export interface CheckProgress {
  url: string
  version: ProtocolVersion
  /** What is being checked, e.g. `wrong-type get_forecast`. */
  step: string
  /** Requests sent so far, and the bound. */
  sent: number
  maxRequests: number
}

/** Options of {@link runCheck}. */
export interface CheckOptions {
  /** The MCP endpoint (http or https). */
  url: string
  /** Versions to check (default {@link CHECK_VERSIONS}). */
  versions?: readonly ProtocolVersion[]
  /** Only these tools (default: every listed tool). */
  tools?: readonly string[]
  /** Tools marked safe: each gets one call with valid generated arguments. */
  call?: readonly string[]
  /** Every listed tool is marked safe (tools can have side effects: the CLI warns). */
  callAll?: boolean
  /** Extra request headers on every request (e.g. `authorization`), names lower case. */
  headers?: Record<string, string>
  /** Time one request may take, in ms (default {@link DEFAULT_TIMEOUT_MS}). */
  timeoutMs?: number
  /** Upper bound of requests sent, SDK handshake included (default {@link DEFAULT_MAX_REQUESTS}). */
  maxRequests?: number
  /** The canary placed in rejected values (default: random per run). */
  canary?: string
  /** `clientInfo.version` of the handshake. */
  clientVersion?: string
  onProgress?: (p: CheckProgress) => void
}

/** The outcome of a run against one URL. */
export interface CheckReport {
  url: string
  /** Per version asked: the version the server answered with, or why it was not checked. */
  versions: { version: ProtocolVersion; negotiated?: string; skipped?: string }[]
  rows: CaseRow[]
  /** Requests sent (the SDK's included). */
  requests: number
  /** True when some cases were not sent because `maxRequests` was reached. */
  budgetReached: boolean
  /** True when at least one handshake succeeded. */
  connected: boolean
}

/** What one version's cases need of the run: the URL, the options, the budget and the shared request ids. */
interface RunState {
  opts: CheckOptions & { timeoutMs: number }
  budget: RequestBudget
  canary: string
  /** Hands out the next request id of the run (ids are unique across versions). */
  nextId: () => number
  /** Reserves `n` ids (for the planned cases, which count their own). */
  reserve: (n: number) => number
  addRow: (row: CaseRow) => void
  progress: (step: string) => void
}

/**
 * Reads `tools/list`, every page (at most {@link MAX_LIST_PAGES}), on the session's headers.
 * @param answers receives each page's answer without its body (for the content-type row)
 */
async function listTools(state: RunState, version: ProtocolVersion, headers: Record<string, string>, answers: { sent: string; answer: HttpAnswer }[]): Promise<ToolListing> {
  const listed: unknown[] = []
  const served: Record<string, unknown>[] = []
  let cursor: string | undefined
  let answer: HttpAnswer | undefined
  let id = 0
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    id = state.nextId()
    const req = buildRequest(version, id, 'tools/list', cursor !== undefined ? { cursor } : undefined)
    answer = await postOnce(state.opts.url, req.body, { ...headers, ...req.headers }, [id], state.opts.timeoutMs, state.budget)
    answers.push({ sent: 'tools/list', answer: headOnly(answer) })
    const r = replyFor(answer, id)
    if (r.kind !== 'result') break
    listed.push(...listedTools(r.result).tools)
    if (isObject(r.result) && Array.isArray(r.result.tools)) for (const t of r.result.tools) if (isObject(t) && typeof t.name === 'string') served.push(t)
    const next = isObject(r.result) ? r.result.nextCursor : undefined
    if (typeof next !== 'string' || next === '') break
    cursor = next
  }
  const { tools, malformed } = listedTools({ tools: listed })
  return { ...(answer ? { answer } : {}), id, tools, served, malformed }
}

/**
 * The tools under check of one version: the listed ones `--tool` asks for (an info row for each
 * name not listed), each with its schema row and the valid arguments built for it (an info row
 * for a tool marked safe whose arguments could not be built).
 */
function toolsUnderCheck(state: RunState, version: ProtocolVersion, all: ListedTool[]): { tools: ToolUnderCheck[]; callable: Set<string> } {
  const { opts } = state
  const wanted = opts.tools ? all.filter((t) => opts.tools!.includes(t.name)) : all
  for (const name of opts.tools ?? []) if (!all.some((t) => t.name === name)) state.addRow(unlistedToolRow(version, name))
  const callable = new Set(opts.callAll ? wanted.map((t) => t.name) : (opts.call ?? []).filter((n) => wanted.some((t) => t.name === n)))
  const tools: ToolUnderCheck[] = wanted.map((tool) => {
    const schema = reportSchema(tool, version)
    state.addRow(schemaRow(version, tool, schema))
    return { tool, schema, valid: validArguments(tool.inputSchema, schema.validate) }
  })
  for (const t of tools) if (callable.has(t.tool.name) && !t.valid.ok) state.addRow(notCalledRow(version, t.tool.name, t.valid.reason))
  return { tools, callable }
}

/** Runs one version's cases on an open session whose negotiated version is `version`: tools/list, the schema rows, the planned cases, the content-type row. */
async function checkVersion(state: RunState, version: ProtocolVersion, session: Session): Promise<void> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': version,
    ...(session.sessionId !== undefined ? { 'mcp-session-id': session.sessionId } : {}),
    ...(state.opts.headers ?? {}),
  }
  const answers: { sent: string; answer: HttpAnswer }[] = []
  state.progress('tools/list')
  const listing = await listTools(state, version, headers, answers)
  state.addRow(toolsListRow(version, listing))
  const { tools, callable } = toolsUnderCheck(state, version, listing.tools)
  const firstId = state.reserve(0)
  const planned = planCases({ version, tools, callable, canary: state.canary, firstId })
  state.reserve(planned.length * 3 + 1)
  for (const c of planned) {
    state.progress(`${c.case}${c.tool !== undefined ? ' ' + c.tool : ''}`)
    const answer = await postOnce(state.opts.url, c.body, { ...headers, ...(c.headers ?? {}) }, c.ids, state.opts.timeoutMs, state.budget)
    if (c.ids.length > 0) answers.push({ sent: c.sent, answer: headOnly(answer) })
    const { verdict, answered } = c.judge(answer)
    state.addRow({
      id: `${version} ${c.tool ?? '*'} ${c.case}`,
      version,
      case: c.case,
      ...(c.tool !== undefined ? { tool: c.tool } : {}),
      sent: c.sent,
      answered,
      status: answer.status,
      ...verdict,
    })
  }
  // The tool set again, after the cases: a set that changes under a client (a rug pull) shows here.
  state.progress('tools/list again')
  state.addRow(await toolSetRow(version, listing, await listTools(state, version, headers, answers)))
  state.addRow(contentTypeRow(version, answers))
}

/**
 * Runs every case against `opts.url`.
 * @returns the report; rows in the order they were produced (the CLI sorts them)
 */
export async function runCheck(options: CheckOptions): Promise<CheckReport> {
  const opts = { ...options, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }
  const budget = new RequestBudget(options.maxRequests ?? DEFAULT_MAX_REQUESTS)
  const canary = options.canary ?? `mcp-edge-check-canary-${crypto.randomUUID().slice(0, 8)}`
  const report: CheckReport = { url: opts.url, versions: [], rows: [], requests: 0, budgetReached: false, connected: false }
  // The one place where server text enters the report: every row and version note goes through
  // the sanitiser (./safe-text), so no format (table, lines, JSON, JUnit, Markdown) can print a control raw.
  const addRow = (row: CaseRow) => void report.rows.push(safeRowText(row))
  const addVersion = (v: CheckReport['versions'][number]) => void report.versions.push(safeRowText(v))
  let id = 1
  const versions = [...(options.versions ?? CHECK_VERSIONS)]
  for (let i = 0; i < versions.length; i++) {
    const version = versions[i]!
    const progress = (step: string) => options.onProgress?.({ url: opts.url, version, step, sent: budget.sent, maxRequests: budget.max })
    const state: RunState = {
      opts,
      budget,
      canary,
      nextId: () => id++,
      reserve: (n) => {
        const first = id
        id += n
        return first
      },
      addRow,
      progress,
    }
    progress('handshake')
    let session: Session
    try {
      session = isModern(version) ? await modernHandshake(opts.url, opts, budget) : await handshake(opts.url, version, opts, budget)
    } catch (err) {
      if (err instanceof AuthorizationRequired) {
        addRow(
          authorizationRow(
            version,
            err.challenge,
            Object.keys(opts.headers ?? {}).some((name) => name.toLowerCase() === 'authorization')
          )
        )
        addVersion({ version, skipped: 'needs authorization (HTTP 401)' })
        continue
      }
      const why = budget.spent ? 'not sent: the request budget was spent' : sdkError(err)
      addRow(handshakeRow(version, { error: why }))
      addVersion({ version, skipped: why })
      continue
    }
    report.connected = true
    addRow(handshakeRow(version, session))
    if (options.versions === undefined && session.negotiated === OLDEST_VERSION && !versions.includes(OLDEST_VERSION)) versions.push(OLDEST_VERSION)
    if (session.negotiated !== version) {
      addVersion({ version, negotiated: session.negotiated, skipped: `the server answered ${printable(session.negotiated, 20)}` })
      await session.close()
      continue
    }
    addVersion({ version, negotiated: session.negotiated })
    await checkVersion(state, version, session)
    progress('closing the session')
    await session.close()
  }
  report.requests = budget.sent
  report.budgetReached = budget.spent
  return report
}
