/**
 * @module pipeline
 * The data path of one `POST /mcp` after the transport checks (DESIGN.md section 2), one call per
 * stage: parse -> era -> classify -> batch rule -> validate -> forward -> grade -> respond.
 * Also the pass-through of `GET` and `DELETE`. Uses only web-standard Request/Response types and
 * the injected ports, so it runs unchanged on Node and on Workers. Never throws to the caller for
 * bad input or origin faults; every request id gets exactly one answer.
 */
import { allowsBatches, DEFAULT_VERSION, isKnownVersion, isModern, type ProtocolVersion } from './era'
import { classify, type Classified } from './classify'
import { ErrorCode, errorText, isObject, NULL_ID, toRawId, type RawId, type RpcError } from './jsonrpc'
import { memberText, scanJsonText } from './json-text'
import { parseBody } from './parse'
import { gradeHeader, type GradeRow } from './grade'
import { pullToolList } from './origin-session'
import { validateToolsCall } from './validate'
import { errorResponse, Exchange, gatewayError, idLabel, JSON_HEADERS, type EdgeDeps, type OriginTarget, type Pending } from './exchange'
import { callOrigin, forwardRequests, forwardWithoutReply } from './forward'

/**
 * Handles one `POST /mcp` whose transport checks passed.
 * @param body the request body bytes (already bounded by MAX_BODY_BYTES)
 * @param headers the client's request headers
 * @returns the response: a JSON body, an SSE stream, or 202 with no body
 */
export async function handlePost(body: Uint8Array | string, headers: Headers, target: OriginTarget, deps: EdgeDeps): Promise<Response> {
  const { config } = deps
  // Stage 2: parse.
  const parsed = parseBody(body)
  if (parsed.kind === 'reject') {
    const ex = new Exchange(deps, target, DEFAULT_VERSION)
    ex.row({ id: 'null', method: '', grade: 'rejected', code: parsed.code, answeredBy: 'edge' })
    ex.finish(400)
    return errorResponse(400, NULL_ID, { code: parsed.code, message: parsed.code === ErrorCode.ParseError ? 'Parse error: ' + parsed.reason : 'Invalid Request: ' + parsed.reason })
  }

  // Era: the header when present (D14), otherwise 2025-03-26, or what initialize asks for.
  const headerVersion = headers.get('mcp-protocol-version')
  const firstId = (): RawId => {
    if (parsed.kind !== 'single' || !isObject(parsed.item.value)) return NULL_ID
    return toRawId(parsed.item.value.id, memberText(parsed.text, parsed.item.el, 'id')) ?? NULL_ID
  }
  if (headerVersion !== null && !(isKnownVersion(headerVersion) && config.supportedVersions.includes(headerVersion))) {
    const ex = new Exchange(deps, target, DEFAULT_VERSION)
    const id = firstId()
    ex.row({ id: idLabel(id), method: '', grade: 'rejected', code: ErrorCode.UnsupportedVersion, answeredBy: 'edge' })
    ex.finish(400)
    return errorResponse(400, id, {
      code: ErrorCode.UnsupportedVersion,
      message: `Unsupported protocol version. Supported: ${config.supportedVersions.join(', ')}`,
      data: { supported: config.supportedVersions, requested: headerVersion.slice(0, 64) },
    })
  }
  let era: ProtocolVersion = (headerVersion as ProtocolVersion | null) ?? DEFAULT_VERSION
  if (headerVersion === null && parsed.kind === 'single' && isObject(parsed.item.value) && parsed.item.value.method === 'initialize') {
    const asked = isObject(parsed.item.value.params) ? parsed.item.value.params.protocolVersion : undefined
    if (isKnownVersion(asked) && !isModern(asked)) era = asked
  }
  const ex = new Exchange(deps, target, era)

  // Stage 4: batch rule.
  if (parsed.kind === 'batch') {
    if (!allowsBatches(era)) {
      ex.row({ id: 'null', method: '', grade: 'rejected', code: ErrorCode.InvalidRequest, answeredBy: 'edge' })
      ex.finish(400)
      return errorResponse(400, NULL_ID, { code: ErrorCode.InvalidRequest, message: `Invalid Request: JSON-RPC batches are not part of MCP ${era}` })
    }
    if (parsed.items.length > config.maxBatch) {
      ex.row({ id: 'null', method: '', grade: 'rejected', code: ErrorCode.InvalidRequest, answeredBy: 'edge' })
      ex.finish(400)
      return errorResponse(400, NULL_ID, { code: ErrorCode.InvalidRequest, message: `Invalid Request: a batch may hold at most ${config.maxBatch} messages` })
    }
    return handleBatch(parsed.items.map((it) => classify(it, parsed.text)), headers, ex)
  }
  return handleSingle(classify(parsed.item, parsed.text), headers, ex)
}

function toolsCallContext(ex: Exchange, headers: Headers) {
  const { deps, target, era } = ex
  const carry: Record<string, string> = {}
  const auth = headers.get('authorization')
  if (auth) carry.authorization = auth
  return {
    registry: deps.registry,
    originId: target.id,
    scope: 'public',
    era,
    config: deps.config,
    pull: () => pullToolList({ client: deps.origin, url: target.url, era, headers: carry, timeoutMs: deps.config.originTimeoutMs }),
  }
}

/** Stage 5 for one request: a local answer text, or what to forward. */
async function decide(c: Extract<Classified, { kind: 'request' }>, headers: Headers, ex: Exchange): Promise<{ answer: string; row: GradeRow } | { forward: Pending }> {
  if (c.method !== 'tools/call') return { forward: { id: c.id, method: c.method, unvalidated: false, answered: false } }
  const verdict = await validateToolsCall(c.id, c.params, toolsCallContext(ex, headers))
  if (verdict.kind === 'answer') {
    const row: GradeRow = { id: idLabel(c.id), method: c.method, grade: 'rejected', answeredBy: 'edge' }
    if (verdict.tool !== undefined) row.tool = verdict.tool
    if (verdict.code !== undefined) row.code = verdict.code
    if (verdict.isError) row.isError = true
    return { answer: verdict.text, row }
  }
  return { forward: { id: c.id, method: c.method, tool: verdict.tool, unvalidated: verdict.unvalidated, answered: false } }
}

async function handleSingle(c: Classified, headers: Headers, ex: Exchange): Promise<Response> {
  if (c.kind === 'invalid') {
    const status = c.id === NULL_ID || c.responseShaped || c.notification ? 400 : 200
    ex.row({ id: idLabel(c.id), method: '', grade: 'rejected', code: c.error.code, answeredBy: 'edge' })
    ex.finish(status)
    return errorResponse(status, c.responseShaped || c.notification ? NULL_ID : c.id, c.error)
  }
  if (c.kind === 'notification' || c.kind === 'response') {
    if (c.kind === 'notification' && c.method === 'notifications/tools/list_changed') ex.deps.registry.invalidate(ex.target.id, 'public')
    return forwardWithoutReply(c.text, headers, ex)
  }
  const d = await decide(c, headers, ex)
  if ('answer' in d) {
    ex.row(d.row)
    ex.finish(200)
    return new Response(d.answer, { status: 200, headers: { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) } })
  }
  ex.pending.set(c.id.key, d.forward)
  return forwardRequests(c.text, [d.forward], [], headers, ex, false)
}

/** A local entry of a batch answer (its text), kept in request order. */
interface LocalEntry {
  text: string
}

async function handleBatch(items: Classified[], headers: Headers, ex: Exchange): Promise<Response> {
  const hasResponses = items.some((c) => c.kind === 'response')
  const hasRequests = items.some((c) => c.kind === 'request' || c.kind === 'notification')
  if (hasResponses && hasRequests) {
    // MCP 2025-03-26 transports: a POST holds requests/notifications, or responses, never both.
    ex.row({ id: 'null', method: '', grade: 'rejected', code: ErrorCode.InvalidRequest, answeredBy: 'edge' })
    ex.finish(400)
    return errorResponse(400, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: a batch mixes requests and responses' })
  }
  const local: LocalEntry[] = []
  const forward: string[] = []
  const forwarded: Pending[] = []
  const seen = new Set<string>()
  const decisions: Promise<void>[] = []
  for (const c of items) {
    if (c.kind === 'invalid') {
      if (c.notification) {
        // D15: MCP-invalid notifications inside a batch get no entry
        ex.row({ id: 'null', method: '', grade: 'rejected', code: c.error.code, answeredBy: 'edge' })
        continue
      }
      const id = c.responseShaped ? NULL_ID : c.id
      ex.row({ id: idLabel(id), method: '', grade: 'rejected', code: c.error.code, answeredBy: 'edge' })
      local.push({ text: errorText(id, c.error) })
      continue
    }
    if (c.kind === 'notification' || c.kind === 'response') {
      if (c.kind === 'notification' && c.method === 'notifications/tools/list_changed') ex.deps.registry.invalidate(ex.target.id, 'public')
      forward.push(c.text)
      continue
    }
    if (seen.has(c.id.key)) {
      // D4: the first of a repeated id is processed; later ones are refused locally.
      ex.row({ id: idLabel(c.id), method: c.method, grade: 'rejected', code: ErrorCode.InvalidRequest, answeredBy: 'edge' })
      local.push({ text: errorText(c.id, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: this id is already used in the batch' }) })
      continue
    }
    seen.add(c.id.key)
    const slot = local.length
    local.push({ text: '' })
    decisions.push(
      decide(c, headers, ex).then((d) => {
        if ('answer' in d) {
          ex.row(d.row)
          local[slot]!.text = d.answer
        } else {
          local[slot]!.text = ''
          forward.push(c.text)
          forwarded.push(d.forward)
        }
      })
    )
  }
  await Promise.all(decisions)
  const localTexts = local.map((l) => l.text).filter(Boolean)
  if (forward.length === 0) {
    if (localTexts.length === 0) {
      // Only MCP-invalid notifications: refused as one (D5, D15).
      ex.finish(400)
      return errorResponse(400, NULL_ID, { code: ErrorCode.InvalidRequest, message: 'Invalid Request: notifications must carry object params' })
    }
    const allNull = ex.rows.every((r) => r.id === 'null')
    const status = allNull ? 400 : 200
    ex.finish(status)
    return new Response(`[${localTexts.join(',')}]`, { status, headers: { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) } })
  }
  for (const p of forwarded) ex.pending.set(p.id.key, p)
  if (forwarded.length === 0) {
    // Only notifications/responses go out: 202 unless local entries need an answer.
    const reply = await callOrigin(ex, headers, `[${forward.join(',')}]`)
    if (!('fault' in reply)) reply.discard()
    if (localTexts.length === 0) {
      if ('fault' in reply) {
        ex.finish(502)
        return errorResponse(502, NULL_ID, gatewayError(reply.fault))
      }
      ex.finish(202)
      return new Response(null, { status: 202 })
    }
    ex.finish(200)
    return new Response(`[${localTexts.join(',')}]`, { status: 200, headers: { ...JSON_HEADERS, 'mcp-edge-grade': gradeHeader(ex.rows) } })
  }
  return forwardRequests(`[${forward.join(',')}]`, forwarded, localTexts, headers, ex, true)
}

