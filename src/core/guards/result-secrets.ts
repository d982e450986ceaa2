/**
 * @module core/guards/result-secrets
 * `RESULT_SECRETS` (docs/result-checks.md): credentials in what a tool returns (a file, a page, a
 * log it read), found in the strings of a `tools/call` result (guards/result-text.ts) and, by
 * mode, logged and counted (`audit`, default: the answer unchanged byte for byte), replaced by
 * `[REDACTED:<category>]` (`redact`), or the result refused (`block`: an `isError: true` result,
 * `governance` / `secret_in_result`). A finding names its category and place, never its text.
 *
 * The detector (guards/secret-scan.ts) is the edge's own list, of the categories secretlint's recommended preset and
 * gitleaks cover for these token shapes. It is a list rather than secretlint itself because the
 * input is untrusted and the scan is on the reply path: every rule starts with a fixed prefix,
 * found by one native search for a set of literals, and is then checked by hand over bounded
 * character runs, so the scan is linear in the text on adversarial input (a private-key header
 * repeated 30,000 times included: each character is read a bounded number of times). Measured on
 * a shared 2-core machine (Node 20): secretlint 13's `lintSource` with the recommended preset took
 * 5-12 ms per MB of clean text against under 1 ms for a prefix list, is asynchronous (the reply
 * path is not) and asks for Node 22. Exact token lengths and word boundaries keep look-alikes out:
 * a 40-hex commit hash, a UUID, "PRIVATE KEY" in prose or a lone header, and `AKIA` followed by
 * fewer than 16 characters are no findings. The scan runs once per string of a result for this
 * check and `RESULT_CONTROL` together (guards/result-findings.ts): a result with no credential
 * passes without a second walk. Pure and runtime-neutral.
 */
import type { ReplyGuard, ReplyGuardContext, ReplyUnderCheck, ReplyVerdict } from './guard'
import type { Config } from '../config'
import { visitResultText } from './result-text'
import { redactSecrets } from './secret-scan'
import { resultFindings } from './result-findings'

export { findSecretsAsRead } from './result-findings'

/** The guard of `RESULT_SECRETS`, or null when it is `off`. */
export function resultSecretsGuard(config: Config): ReplyGuard | null {
  const mode = config.resultSecrets
  if (mode === 'off') return null
  const action = mode === 'redact' ? 'redact' : mode === 'block' ? 'block' : 'audit'
  return {
    name: 'result_secrets',
    phase: 'reply',
    // Before any truncation in every mode (the chain runs changing guards first): a secret cut in
    // two by OVERSIZE_RESULT=truncate would be neither found nor whole.
    stage: 'mutate',
    reads: 'result',
    appliesTo: (method) => method === 'tools/call',
    check(under: ReplyUnderCheck, ctx: ReplyGuardContext): ReplyVerdict {
      const { result } = under
      const secrets = resultFindings(under, true).secrets!
      if (secrets.size === 0) return { kind: 'pass' }
      const found = new Map<string, number>()
      let n = 0
      const changed = visitResultText(result, (text, at) => {
        const spans = secrets.get(n++)
        if (spans === undefined) return null
        const counts = new Map<string, number>()
        for (const sp of spans) counts.set(sp.category, (counts.get(sp.category) ?? 0) + 1)
        for (const [category, count] of counts) {
          ctx.report?.({ check: 'result_secrets', category, action, at: at(), count })
          found.set(category, (found.get(category) ?? 0) + count)
        }
        return mode === 'redact' ? redactSecrets(text, spans) : null
      })
      if (found.size === 0 || mode === 'audit') return { kind: 'pass' }
      if (mode === 'redact') return { kind: 'change', result: changed }
      const what = [...found.keys()].join(', ')
      return {
        kind: 'deny',
        code: 'secret_in_result',
        message:
          `The result of this tool call held ${what === '' ? 'a credential' : `credentials (${what})`}; this edge withholds results carrying secrets (RESULT_SECRETS=block), so the result was not relayed. ` +
          'The tool server should not return credentials; an operator can set RESULT_SECRETS=redact to relay such results with the secrets replaced.',
        agentGuidance: 'Do not retry this call as it is; ask the user how to proceed without the credential.',
      }
    },
  }
}
