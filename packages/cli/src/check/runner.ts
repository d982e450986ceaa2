/**
 * @module check/runner
 * Runs `mcp-edge check` against one MCP endpoint: for each protocol version, the handshake with
 * the official SDK's Streamable HTTP client (@modelcontextprotocol/sdk), `tools/list`, then the
 * cases of ./cases sent as raw HTTP POSTs on the same session (so every byte of each client
 * mistake is the one check meant to send), every answer judged by ./cases. Node 20+ (global
 * fetch). Never throws for anything the server does; every request is bounded in time
 * (`timeoutMs`) and the run in number of requests (`maxRequests`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client'
import { createParser } from 'eventsource-parser'
import { validArguments } from './arguments'
import { buildRequest, contentTypeRow, handshakeRow, planCases, schemaRow, type CaseRow, type ToolUnderCheck } from './cases'
import { errorText, isModern, isObject, toRawId, type ProtocolVersion } from './edge-rules'
import { describeReply, MAX_BODY_BYTES, printable, replyFor, type HttpAnswer } from './reply'
import { safeRowText } from './safe-text'
import { listedTools, reportSchema } from './schemas'
import { EdgeError } from 'mcp-edge-validator/rules'

/**
 * The protocol versions check grades, newest first: 2026-07-28 through the official SDK v2 client
 * (@modelcontextprotocol/client), the 2025 revisions through the SDK v1 client.
 */
export const CHECK_VERSIONS: readonly ProtocolVersion[] = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']

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

/** A bound on the requests of a run: {@link take} says whether one more may be sent. */
class RequestBudget {
  sent = 0
  spent = false
  constructor(readonly max: number) {}
  take(): boolean {
    if (this.sent >= this.max) {
      this.spent = true
      return false
    }
    this.sent++
    return true
  }
}

const SSE = 'text/event-stream'

/**
 * Reads at most {@link MAX_BODY_BYTES} bytes of a body (the rest is never read: the stream is
 * cancelled), decoding as it goes and calling `onText` per chunk until it returns true.
 * @returns the text decoded from the bytes read
 */
async function readBody(res: Response, onText: (chunk: string) => boolean): Promise<string> {
  if (!res.body) return ''
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let text = ''
  let bytes = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const room = MAX_BODY_BYTES - bytes
      const part = value.byteLength > room ? value.subarray(0, room) : value
      bytes += part.byteLength
      const chunk = decoder.decode(part, { stream: true })
      text += chunk
      if (onText(chunk) || bytes >= MAX_BODY_BYTES) break
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  return text
}

/** The error a body stream fails with past {@link MAX_BODY_BYTES}; its message is what a handshake row shows. */
export class ReplyTooLargeError extends EdgeError {
  override readonly name = 'ReplyTooLargeError'
  override readonly code = 'EDGE_ERR_CHECK_REPLY_TOO_LARGE'
  constructor() {
    super(`the reply is larger than ${MAX_BODY_BYTES} bytes (check reads at most 1 MiB of each body)`)
  }
}

/**
 * `res` with its body stream bounded to {@link MAX_BODY_BYTES}: past it the stream fails with
 * {@link ReplyTooLargeError} and the connection is cancelled. For the SDK clients, which read a
 * JSON answer whole (`response.json()`), an error answer whole into their error message
 * (`response.text()`), and an SSE answer to its end: replies of 50 MB took the built command's peak RSS to 546-614 MB
 * before (the process's own maxRSS at exit, docs/check.md).
 */
function boundedResponse(res: Response): Response {
  const source = res.body
  if (!source) return res
  const reader = source.getReader()
  let bytes = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) return controller.close()
      bytes += value.byteLength
      if (bytes > MAX_BODY_BYTES) {
        await reader.cancel().catch(() => undefined)
        return controller.error(new ReplyTooLargeError())
      }
      controller.enqueue(value)
    },
    cancel: (reason) => reader.cancel(reason).catch(() => undefined),
  })
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers })
}

function pushJson(out: unknown[], data: string): void {
  try {
    const v: unknown = JSON.parse(data)
    if (Array.isArray(v)) out.push(...v)
    else out.push(v)
  } catch {
    // not JSON: left out of the messages, still in the text
  }
}

/** True when every id has a response in `messages` (or an id-less error came); for no ids, any response. */
function allAnswered(messages: unknown[], ids: readonly (string | number)[]): boolean {
  const probe: HttpAnswer = { status: 200, contentType: null, body: 'json', messages, text: '', headers: {}, ms: 0 }
  if (ids.length === 0) return messages.some((m) => isObject(m) && ('result' in m || 'error' in m))
  return ids.every((id) => replyFor(probe, id).kind !== 'none')
}

/**
 * POSTs one body and reads the answer: a JSON body whole, an SSE stream until every id in `ids`
 * has its response (then the stream is cancelled), each within `timeoutMs`.
 */
async function postOnce(
  url: string,
  body: string,
  headers: Record<string, string>,
  ids: readonly (string | number)[],
  timeoutMs: number,
  budget: RequestBudget
): Promise<HttpAnswer> {
  const started = Date.now()
  const base: HttpAnswer = { status: null, contentType: null, body: 'empty', messages: [], text: '', headers: {}, ms: 0 }
  if (!budget.take()) return { ...base, failure: 'budget' }
  const ctrl = new AbortController()
  const timer = setTimeout(() => ctrl.abort(), timeoutMs)
  let res: Response | undefined
  try {
    res = await fetch(url, { method: 'POST', headers, body, signal: ctrl.signal, redirect: 'manual' })
    const contentType = res.headers.get('content-type')
    const out: HttpAnswer = { ...base, status: res.status, contentType, headers: Object.fromEntries(res.headers) }
    const essence = (contentType ?? '').split(';')[0]!.trim().toLowerCase()
    if (essence === SSE) {
      const replies: Promise<unknown>[] = []
      const parser = createParser({
        onEvent: (e) => {
          const before = out.messages.length
          pushJson(out.messages, e.data)
          for (const m of out.messages.slice(before)) {
            // A request from the server (sampling, elicitation...) to a client that declared no
            // capability: answered -32601 as the SDK client does, so the server can go on.
            if (isObject(m) && typeof m.method === 'string' && 'id' in m && !('result' in m) && !('error' in m)) {
              ;(out.serverRequests ??= []).push(m.method)
              const rawId = toRawId(m.id)
              if (rawId && budget.take()) {
                const refusal = errorText(rawId, { code: -32601, message: 'Method not found' })
                replies.push(
                  fetch(url, { method: 'POST', headers, body: refusal, signal: ctrl.signal }).then(
                    (r) => r.body?.cancel(),
                    () => undefined
                  )
                )
              }
            }
          }
        },
      })
      out.text = await readBody(res, (chunk) => {
        parser.feed(chunk)
        return allAnswered(out.messages, ids)
      })
      await Promise.all(replies)
      out.body = 'sse'
    } else {
      out.text = await readBody(res, () => false)
      if (out.text.trim() === '') out.body = 'empty'
      else {
        pushJson(out.messages, out.text)
        out.body = essence === 'application/json' ? 'json' : 'other'
      }
    }
    return { ...out, ms: Date.now() - started }
  } catch {
    const status = res?.status ?? null
    return { ...base, status, contentType: res?.headers.get('content-type') ?? null, failure: ctrl.signal.aborted ? 'timeout' : 'connect', ms: Date.now() - started }
  } finally {
    clearTimeout(timer)
  }
}

/** An answer without its body text and messages: what the content-type row needs, kept per version without holding each body (up to 1 MiB) to its end. */
function headOnly(a: HttpAnswer): HttpAnswer {
  return { ...a, text: '', messages: [] }
}

/**
 * The fetch the SDK client uses: counted against the budget and bounded by the timeout. Its GET
 * (the standalone SSE stream the client opens after `notifications/initialized`) is answered 405
 * here without being sent: check grades POST answers only, and an open stream would hold the run
 * (the SDK treats 405 as "no standalone stream", MCP Transports §Listening for Messages).
 */
function sdkFetch(budget: RequestBudget, timeoutMs: number): typeof fetch {
  // Every body the SDK reads goes through boundedResponse.
  return async (input, init) => {
    if ((init?.method ?? 'GET').toUpperCase() === 'GET') return new Response(null, { status: 405 })
    if (!budget.take()) throw new Error('request budget spent')
    const signals = [AbortSignal.timeout(timeoutMs), ...(init?.signal ? [init.signal] : [])]
    return boundedResponse(await fetch(input, { ...init, signal: AbortSignal.any(signals) }))
  }
}

/** The SDK's error as one printable line (its text names the HTTP status; never a stack). */
/** Node's and undici's network error codes, as the reason a handshake row gives. */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the server',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed TLS certificate in the chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not verifiable',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not name this host',
}

/**
 * A handshake failure as one line: a network failure by its cause (fetch says only "fetch failed";
 * the code is on `err.cause`), e.g. `cannot connect: connection refused (ECONNREFUSED)`; anything
 * else by the SDK's message, without a stack, at most 80 characters.
 */
function sdkError(err: unknown): string {
  let e: unknown = err
  for (let depth = 0; depth < 5 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && Object.hasOwn(NETWORK_REASONS, code)) return `cannot connect: ${NETWORK_REASONS[code]} (${code})`
    e = (e as { cause?: unknown }).cause
  }
  const msg = (err instanceof Error ? err.message : String(err)).replace(/^Error: /, '')
  // The SDK v1 error of a non-2xx answer carries the status as `code` and the body it read in its
  // message: `null` when the body could not be read (over 1 MiB: boundedResponse).
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined
  if (typeof code === 'number' && code >= 100 && code <= 599 && !msg.includes(`HTTP ${code}`))
    return printable(`HTTP ${code}: ${msg.replace(/: null$/, ': (body over 1 MiB or unreadable)')}`, 80)
  return printable(msg, 80)
}

interface Session {
  negotiated: string
  server?: string
  sessionId?: string
  /** Ends the session (DELETE when there is one) and closes the client. */
  close(): Promise<void>
}

/** What {@link connectSession} needs of an SDK client (v1 `Client` or v2 client). */
interface SdkClient {
  onerror?: (error: Error) => void
  connect(transport: never, options: { timeout: number }): Promise<void>
  close(): Promise<void>
  getServerVersion(): { name: string; version: string } | undefined
}

/** What {@link connectSession} needs of an SDK Streamable HTTP client transport. */
interface SdkTransport {
  readonly sessionId?: string | undefined
  terminateSession(): Promise<void>
}

/**
 * Connects an SDK client (the handshake, within `timeoutMs` ms) and describes the session; a failed
 * handshake closes the client and rethrows the SDK's error.
 * @param negotiated the protocol version the handshake settled on, read after it (undefined: none)
 */
async function connectSession(client: SdkClient, transport: SdkTransport, timeoutMs: number, negotiated: () => string | undefined): Promise<Session> {
  client.onerror = () => undefined
  try {
    await client.connect(transport as never, { timeout: timeoutMs })
  } catch (err) {
    await client.close().catch(() => undefined)
    throw err
  }
  const info = client.getServerVersion()
  const sessionId = transport.sessionId
  return {
    negotiated: negotiated() ?? '(none)',
    ...(info ? { server: printable(`${info.name} ${info.version}`, 40) } : {}),
    ...(sessionId !== undefined ? { sessionId } : {}),
    close: async () => {
      if (sessionId !== undefined) await transport.terminateSession().catch(() => undefined)
      await client.close().catch(() => undefined)
    },
  }
}

/**
 * The 2026-07-28 "handshake": the official SDK v2 client in `auto` negotiation probes with
 * `server/discover` and stays modern only on definitive evidence (a DiscoverResult offering a
 * modern version); otherwise it falls back to `initialize`, and the negotiated version says so.
 */
async function modernHandshake(url: string, opts: Required<Pick<CheckOptions, 'timeoutMs'>> & CheckOptions, budget: RequestBudget): Promise<Session> {
  const client = new ModernClient({ name: 'mcp-edge-check', version: opts.clientVersion ?? '0.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } })
  const transport = new ModernTransport(new URL(url), { requestInit: { headers: opts.headers ?? {} }, fetch: sdkFetch(budget, opts.timeoutMs) })
  return connectSession(client, transport, opts.timeoutMs, () => client.getNegotiatedProtocolVersion())
}

/** The official SDK handshake, offering `version` (the SDK v1 client always offers its latest, so the offer is rewritten). */
async function handshake(url: string, version: ProtocolVersion, opts: Required<Pick<CheckOptions, 'timeoutMs'>> & CheckOptions, budget: RequestBudget): Promise<Session> {
  const client = new Client({ name: 'mcp-edge-check', version: opts.clientVersion ?? '0.0.0' }, { capabilities: {} })
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: opts.headers ?? {} }, fetch: sdkFetch(budget, opts.timeoutMs) })
  const send = transport.send.bind(transport)
  transport.send = (msg, o) => {
    if ('method' in msg && msg.method === 'initialize' && isObject(msg.params)) msg.params.protocolVersion = version
    return send(msg, o)
  }
  return connectSession(client, transport, opts.timeoutMs, () => transport.protocolVersion)
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
  // the sanitiser (./safe-text), so no format (table, lines, JSON) can print a control raw.
  const addRow = (row: CaseRow) => void report.rows.push(safeRowText(row))
  const addVersion = (v: CheckReport['versions'][number]) => void report.versions.push(safeRowText(v))
  let nextId = 1
  for (const version of options.versions ?? CHECK_VERSIONS) {
    const progress = (step: string) => options.onProgress?.({ url: opts.url, version, step, sent: budget.sent, maxRequests: budget.max })
    progress('handshake')
    let session: Session
    try {
      session = isModern(version) ? await modernHandshake(opts.url, opts, budget) : await handshake(opts.url, version, opts, budget)
    } catch (err) {
      const why = budget.spent ? 'not sent: the request budget was spent' : sdkError(err)
      addRow(handshakeRow(version, { error: why }))
      addVersion({ version, skipped: why })
      continue
    }
    report.connected = true
    addRow(handshakeRow(version, session))
    if (session.negotiated !== version) {
      addVersion({ version, negotiated: session.negotiated, skipped: `the server answered ${printable(session.negotiated, 20)}` })
      await session.close()
      continue
    }
    addVersion({ version, negotiated: session.negotiated })
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      ...(session.sessionId !== undefined ? { 'mcp-session-id': session.sessionId } : {}),
      ...(opts.headers ?? {}),
    }
    const answers: { sent: string; answer: HttpAnswer }[] = []

    // tools/list, every page (bounded)
    progress('tools/list')
    const listed: unknown[] = []
    let cursor: string | undefined
    let listAnswer: HttpAnswer | undefined
    let listId = 0
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      listId = nextId++
      const req = buildRequest(version, listId, 'tools/list', cursor !== undefined ? { cursor } : undefined)
      listAnswer = await postOnce(opts.url, req.body, { ...headers, ...req.headers }, [listId], opts.timeoutMs, budget)
      answers.push({ sent: 'tools/list', answer: headOnly(listAnswer) })
      const r = replyFor(listAnswer, listId)
      if (r.kind !== 'result') break
      const { tools } = listedTools(r.result)
      listed.push(...tools)
      const next = isObject(r.result) ? r.result.nextCursor : undefined
      if (typeof next !== 'string' || next === '') break
      cursor = next
    }
    const { tools: all, malformed } = listedTools({ tools: listed })
    const listReply = listAnswer ? replyFor(listAnswer, listId) : { kind: 'none' as const }
    const listOk = listReply.kind === 'result' && !listReply.isError
    // 2026-07-28: a complete tools/list result carries resultType and the caching hints.
    const lr = listReply.kind === 'result' && isObject(listReply.result) ? listReply.result : {}
    const hintProblem =
      !isModern(version) || !listOk
        ? ''
        : lr.resultType !== 'complete'
          ? 'the result has no resultType "complete"'
          : !(Number.isInteger(lr.ttlMs) && (lr.ttlMs as number) >= 0) || (lr.cacheScope !== 'public' && lr.cacheScope !== 'private')
            ? 'the result lacks ttlMs (an integer >= 0) or cacheScope ("public" or "private")'
            : ''
    addRow({
      id: `${version} * tools-list`,
      version,
      case: 'tools-list',
      sent: 'tools/list (every page)',
      answered: listOk ? `${all.length} tools${malformed ? `, ${malformed} without a name` : ''}` : listAnswer ? describeReply(listAnswer, listId) : 'not sent',
      status: listAnswer?.status ?? null,
      grade: listAnswer?.failure === 'budget' ? 'info' : listOk && malformed === 0 && !hintProblem ? 'pass' : 'fails',
      expected: isModern(version) ? 'a ListToolsResult with resultType, ttlMs and cacheScope' : 'a ListToolsResult: tools, each with a name and an inputSchema',
      rule: `MCP ${version} Server Tools §Listing Tools; MCP ${version} schema ListToolsResult${isModern(version) ? `; MCP ${version} Server Utilities Caching §Cacheable Results (MUST carry ttlMs and cacheScope)` : ''}`,
      why: listOk ? [malformed ? `${malformed} entries without a string name` : '', hintProblem].filter(Boolean).join('; ') : 'no tool list',
    })
    const wanted = options.tools ? all.filter((t) => options.tools!.includes(t.name)) : all
    for (const name of options.tools ?? []) {
      if (!all.some((t) => t.name === name)) {
        addRow({
          id: `${version} ${name} schema`,
          version,
          case: 'schema',
          tool: name,
          sent: 'tools/list',
          answered: 'not listed',
          grade: 'info',
          expected: 'a listed tool',
          rule: '--tool',
          why: 'the server does not list this tool',
        })
      }
    }
    const callable = new Set(options.callAll ? wanted.map((t) => t.name) : (options.call ?? []).filter((n) => wanted.some((t) => t.name === n)))
    const underCheck: ToolUnderCheck[] = wanted.map((tool) => {
      const schema = reportSchema(tool, version)
      addRow(schemaRow(version, tool, schema))
      return { tool, schema, valid: validArguments(tool.inputSchema, schema.validate) }
    })
    for (const t of underCheck) {
      if (callable.has(t.tool.name) && !t.valid.ok) {
        addRow({
          id: `${version} ${t.tool.name} valid-call`,
          version,
          case: 'valid-call',
          tool: t.tool.name,
          sent: 'not sent',
          answered: 'not called',
          grade: 'info',
          expected: 'valid arguments',
          rule: 'docs/check.md (valid arguments)',
          why: `no valid arguments could be built: ${t.valid.reason}`,
        })
      }
    }

    const planned = planCases({ version, tools: underCheck, callable, canary, firstId: nextId })
    nextId += planned.length * 3 + 1
    for (const c of planned) {
      progress(`${c.case}${c.tool !== undefined ? ' ' + c.tool : ''}`)
      const answer = await postOnce(opts.url, c.body, { ...headers, ...(c.headers ?? {}) }, c.ids, opts.timeoutMs, budget)
      if (c.ids.length > 0) answers.push({ sent: c.sent, answer: headOnly(answer) })
      const { verdict, answered } = c.judge(answer)
      addRow({
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
    addRow(contentTypeRow(version, answers))
    progress('closing the session')
    await session.close()
  }
  report.requests = budget.sent
  report.budgetReached = budget.spent
  return report
}
