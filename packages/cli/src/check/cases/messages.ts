/**
 * @module check/cases/messages
 * The JSON-RPC message cases, one request each per protocol version: a body that is not JSON
 * (`parse-error`), a request whose method is a number (`invalid-request`), a notification for a
 * request that does not exist (`notification`), a call of a tool no server lists (`unknown-tool`).
 * Pure.
 */
import { isModern, requestMessage } from '../edge-rules'
import { describeHttp } from '../reply'
import { judgeMistake } from './mistakes'
import { buildRequest, envelope, judged, toolsSection, UNKNOWN_TOOL_NAME } from './requests'
import { judgeNotification } from './transport'
import type { VersionCase } from './types'

/** JSON-RPC 2.0 §5.1: a body that is not JSON gets -32700 with id null. */
export const parseError: VersionCase = {
  name: 'parse-error',
  plan({ version: v }, nextId) {
    const req = buildRequest(v, nextId(), 'tools/list')
    return {
      case: 'parse-error',
      sent: 'a body that is not JSON (cut-off tools/list)',
      body: req.body.slice(0, -1),
      headers: req.headers,
      ids: [],
      judge: (a) =>
        judged(
          a,
          null,
          judgeMistake(a, null, {
            expected: 'JSON-RPC error -32700, id null',
            rule: 'JSON-RPC 2.0 §5.1 (-32700 Parse error); §5 (id null when it cannot be read)',
            codes: [-32700],
            isErrorOk: false,
          })
        ),
    }
  },
}

/** JSON-RPC 2.0 §4, §5.1: a request whose method is not a string gets -32600. */
export const invalidRequest: VersionCase = {
  name: 'invalid-request',
  plan({ version: v }, nextId) {
    const id = nextId()
    return {
      case: 'invalid-request',
      sent: 'a request whose method is a number',
      body: JSON.stringify({ ...requestMessage('tools/list', isModern(v) ? { _meta: envelope(v) } : undefined, id), method: 42 }),
      ids: [id],
      judge: (a) =>
        judged(
          a,
          id,
          judgeMistake(a, id, {
            expected: 'JSON-RPC error -32600',
            rule: 'JSON-RPC 2.0 §4 (method is a String); §5.1 (-32600 Invalid Request)',
            codes: [-32600],
            isErrorOk: false,
          })
        ),
    }
  },
}

/** MCP Transports §Sending Messages to the Server item 4: a notification gets 202 and no body. */
export const notification: VersionCase = {
  name: 'notification',
  plan({ version: v }) {
    return {
      case: 'notification',
      sent: 'notifications/cancelled for an unknown request',
      body: JSON.stringify(
        requestMessage('notifications/cancelled', { requestId: 'mcp-edge-check-none', reason: 'mcp-edge check', ...(isModern(v) ? { _meta: envelope(v) } : {}) })
      ),
      ids: [],
      judge: (a) => ({ verdict: judgeNotification(a, v), answered: describeHttp(a) + (a.body !== 'empty' ? `: ${a.messages.length} message(s)` : '') }),
    }
  },
}

/** MCP Server Tools §Error Handling: an unknown tool is a protocol error (example -32602). */
export const unknownTool: VersionCase = {
  name: 'unknown-tool',
  plan({ version: v }, nextId) {
    const id = nextId()
    return {
      case: 'unknown-tool',
      sent: `tools/call ${UNKNOWN_TOOL_NAME}`,
      ...buildRequest(v, id, 'tools/call', { name: UNKNOWN_TOOL_NAME, arguments: {} }),
      ids: [id],
      judge: (a) =>
        judged(
          a,
          id,
          judgeMistake(a, id, {
            expected: 'JSON-RPC error -32602 (unknown tool)',
            rule: `${toolsSection(v, 'Error Handling')} (unknown tools are protocol errors, example -32602)`,
            codes: [-32602],
            isErrorOk: false,
          })
        ),
    }
  },
}
