/**
 * @module core/guards/request/tool-scopes
 * The per-tool scope guard (`TOOL_SCOPES`, auth on; access/apply-scopes.ts decides and words the
 * denial): a `tools/call` the caller's verified token may not make is refused before validation or
 * any origin request, with the 403 scope challenge (a per-id -31010 inside a batch). In the chain
 * after the tool filter, so a hidden tool still reads as unknown, not as out of scope. Pure and
 * runtime-neutral.
 */
import { idLabel } from '../../exchange'
import { boundText } from '../../jsonrpc/bound-text'
import { requestIdOf } from '../../observe/request-id'
import { applyScopes } from '../../access/apply-scopes'
import { denialAnswerKind, recordDenial } from '../denial'
import type { RequestGuard, RequestVerdict } from '../guard'

const PASS: RequestVerdict = { kind: 'pass' }

/** The scope guard; passes every call when auth is off (no verified identity) or `TOOL_SCOPES` is empty. Synchronous. */
export const toolScopesGuard: RequestGuard = {
  name: 'tool_scopes',
  phase: 'request',
  at: 'message',
  appliesTo: (method) => method === 'tools/call',
  check(c, { ex }) {
    const auth = ex.deps.auth
    if (!auth) return PASS
    const denial = applyScopes(auth.toolScopes, ex.identity, c.id, c.params?.name, auth.metadataUrl)
    if (!denial) return PASS
    // The log line's status is the HTTP status the answer goes out with: the batch's 200 for an element.
    const status = denialAnswerKind('insufficient_scope', { era: ex.era, batch: ex.batch }) === 'http' ? 403 : 200
    recordDenial(ex.deps, ex.requestId ?? requestIdOf(undefined), ex.target.id, {
      reason: 'insufficient_scope',
      status,
      id: idLabel(c.id),
      tool: denial.tool,
      scope: denial.needed.join(' '),
      method: 'POST',
      ...(ex.identity ? { sub: boundText(ex.identity.sub, 128) } : {}),
    })
    return { kind: 'deny', answer: denial }
  },
}
