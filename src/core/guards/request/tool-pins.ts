/**
 * @module core/guards/request/tool-pins
 * The pin guard (`TOOL_PINNING=enforce`, docs/pinning.md; pinning/apply-pins.ts decides): a
 * `tools/call` of a tool whose definition is not the approved one (`changed`, `pending`), or any
 * call while the pins cannot be read, is answered by the edge as invalid arguments are
 * ({@link denialAnswerKind}); a name neither served nor approved is an unknown tool. A call it lets
 * through carries the approved definition, so argument validation checks the approved
 * `inputSchema` only. On a first `tools/list` page it adds the whole-list pull the list step needs
 * for a baseline. Under `audit` and `off` it is not in the chain (audit decides lists in the
 * background and never refuses). Synchronous when the pins are held (a Map lookup).
 */
import { pinBook } from '../../exchange'
import { isObject } from '../../jsonrpc/jsonrpc'
import { isModern, type ProtocolVersion } from '../../jsonrpc/versions'
import { decodeHeaderValue } from '../../protocol/standard-headers'
import { gateToolsCall, type CallGate } from '../../pinning/apply-pins'
import { toToolRecord } from '../../validation/tool-store'
import type { ToolRecord } from '../../validation/tool-record'
import { requestIdOf } from '../../observe/request-id'
import type { CallAnswer } from '../../local-answer'
import type { Config } from '../../config'
import type { RequestHeaders } from '../../edge-response'
import { denialAnswerKind, recordDenial } from '../denial'
import type { GuardedRequest, RequestGuard, RequestGuardContext, RequestVerdict } from '../guard'

const PASS: RequestVerdict = { kind: 'pass' }

/** The pin guard under `TOOL_PINNING=enforce`, else null (see the module comment). */
export function toolPinsGuard(config: Config): RequestGuard | null {
  if (config.toolPinning !== 'enforce') return null
  return {
    name: 'tool_pins',
    phase: 'request',
    at: 'message',
    mode: 'enforce',
    appliesTo: (method) => method === 'tools/call' || method === 'tools/list',
    check(c, ctx) {
      const { ex, headers, scope } = ctx
      // tools/list: a first page of an (origin, scope) with no baseline is decided after one whole-list pull (apply-pins.ts holdToolsList).
      if (c.method === 'tools/list') return { kind: 'pass', info: { pull: () => ctx.tools(ex.scope ?? 'public').pull() } }
      const g = gateToolsCall(pinBook(ex.deps), {
        originId: ex.target.id,
        scope,
        era: ex.era,
        id: c.id,
        name: c.params?.name,
        // Decoded (the `=?base64?…?=` form of a non-ASCII name included): the gate compares names, not header encodings.
        headerName: isModern(ex.era) ? mcpNameHeader(headers) : null,
        asToolError:
          denialAnswerKind('changed', { era: ex.era, batch: ex.batch, invalidArgs: ex.deps.config.invalidArgs, taskAugmented: isObject(c.params?.task) }) === 'is-error-result',
        pull: () => ctx.tools(scope).pull(),
      })
      return g instanceof Promise ? g.then((v) => afterGate(c, ctx, v)) : afterGate(c, ctx, g)
    },
  }
}

/** The 2026-07-28 `Mcp-Name` header, decoded (MCP 2026-07-28 Streamable HTTP §Value Encoding); null when absent or not decodable. */
function mcpNameHeader(headers: RequestHeaders): string | null {
  const raw = headers.get('mcp-name')
  return raw === null ? null : decodeHeaderValue(raw)
}

function afterGate(c: GuardedRequest, { ex, scope }: RequestGuardContext, g: CallGate): RequestVerdict {
  if (g.kind === 'answer') {
    recordDenial(ex.deps, ex.requestId ?? requestIdOf(undefined), ex.target.id, { reason: g.blocked })
    const a: CallAnswer = { kind: 'call', id: g.id, tool: g.tool, text: g.text }
    if (g.code !== undefined) a.code = g.code
    if (g.isError) a.isError = true
    if (g.unknownTool) a.unknownTool = true
    return { kind: 'deny', answer: a }
  }
  const name = c.params?.name
  if (g.approvedDigest === undefined || typeof name !== 'string') return PASS
  const pinned = pinBook(ex.deps).approvedTool(ex.target.id, scope, name, g.approvedDigest, (def) => ex.deps.registry.resolve(approvedRecord(def, ex.era)))
  return pinned ? { kind: 'pass', info: { pinned } } : PASS
}

/** The record of an approved definition: no `fetchedAt` and no source tag (the operator's word, never rechecked against a fresh list). */
function approvedRecord(def: Record<string, unknown>, era: ProtocolVersion): ToolRecord {
  const r = toToolRecord({ inputSchema: {}, ...def }, era, 0)!
  delete r.fetchedAt
  return r
}
