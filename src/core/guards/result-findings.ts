/**
 * @module core/guards/result-findings
 * The findings of `RESULT_CONTROL` and `RESULT_SECRETS` in one tool result, found in one walk of
 * its strings (guards/result-text.ts) and kept for that result object during the run of the reply
 * chain (on its state: nothing outlives the run, and no weak map is paid for): with both checks on, each
 * string is searched once for hidden characters (which both need: a credential is found as the
 * model reads it, hidden characters left out) and once for credentials, and a result with no
 * finding costs each check nothing more. A check that finds nothing in a result therefore neither
 * walks it again nor allocates per string; only the strings that hold a finding are visited again,
 * to report and change them. Results are not changed in place (a check that changes one makes a
 * copy), so what is kept for an object stays true of it. Pure and runtime-neutral.
 */
import { findControls, stripControls, type ControlSpan } from './control-scan'
import { findSecrets, type SecretSpan } from './secret-scan'
import { visitResultText } from './result-text'

/**
 * The secrets of `text`, found as the model reads it: when the text holds hidden characters (the
 * ones `RESULT_CONTROL` finds), the scan runs on the text without them and each span is mapped
 * back to the original, hidden characters inside it included. A token split by a zero-width space
 * or an escape sequence is found whatever `RESULT_CONTROL` says (audit relays the hidden
 * characters, and the model reads straight through them). Linear: one more scan, only for text
 * that holds hidden characters.
 * @param hidden `findControls(text)` when the caller has it already
 */
export function findSecretsAsRead(text: string, hidden: readonly ControlSpan[] = findControls(text)): readonly SecretSpan[] {
  if (hidden.length === 0) return findSecrets(text)
  const spans = findSecrets(stripControls(text, hidden))
  if (spans.length === 0) return spans
  // Original index of each kept character, asked in increasing order (the spans are ordered and do
  // not overlap): the removed spans are walked once in all.
  let h = 0
  let shift = 0
  const toOriginal = (k: number): number => {
    while (h < hidden.length && hidden[h]!.start - shift <= k) {
      shift += hidden[h]!.end - hidden[h]!.start
      h++
    }
    return k + shift
  }
  return spans.map((sp) => {
    const start = toOriginal(sp.start)
    return { start, end: toOriginal(sp.end - 1) + 1, category: sp.category }
  })
}

/**
 * The findings in one result, per string holding one, by the string's place in the order
 * `visitResultText` visits them (0 for the first string visited).
 */
export interface ResultFindings {
  /** Hidden characters (`findControls`) of each string that holds any. */
  readonly controls: ReadonlyMap<number, readonly ControlSpan[]>
  /** Credentials as read (`findSecretsAsRead`) of each string that holds any; null when not looked for. */
  readonly secrets: ReadonlyMap<number, readonly SecretSpan[]> | null
}

/** What of guards/guard.ts `ReplyUnderCheck` this reads and writes (named here: guard.ts names this module's types). */
interface UnderCheck {
  readonly result: Record<string, unknown>
  resultFindings?: { of: Record<string, unknown>; findings: ResultFindings }
}

/**
 * The findings of the result under check (module comment): found on the first ask in a run, then
 * kept on the run's state for the checks after it, as long as the result is the same object.
 * @param under the response under check (the chain's state for this run: the findings are kept on it)
 * @param secrets true to look for credentials as well (hidden characters are always looked for:
 *   the credential scan needs them)
 */
export function resultFindings(under: UnderCheck, secrets: boolean): ResultFindings {
  const result = under.result
  const known = under.resultFindings?.of === result ? under.resultFindings.findings : undefined
  if (known !== undefined && (known.secrets !== null || !secrets)) return known
  // The maps are made at the first finding: a clean result allocates none.
  let controls: Map<number, readonly ControlSpan[]> | null = null
  let secretsAt: Map<number, readonly SecretSpan[]> | null = null
  let n = 0
  visitResultText(result, (text) => {
    const at = n++
    const hidden = known !== undefined ? (known.controls.get(at) ?? NO_CONTROLS) : findControls(text)
    if (hidden.length > 0 && known === undefined) (controls ??= new Map()).set(at, hidden)
    if (secrets) {
      const spans = findSecretsAsRead(text, hidden)
      if (spans.length > 0) (secretsAt ??= new Map()).set(at, spans)
    }
    return null
  })
  const findings: ResultFindings = { controls: known?.controls ?? controls ?? NONE, secrets: secrets ? (secretsAt ?? NONE) : null }
  under.resultFindings = { of: result, findings }
  return findings
}

const NO_CONTROLS: readonly ControlSpan[] = Object.freeze([])
/** The findings of a string list that holds none (shared: nothing is ever added to it). */
const NONE: ReadonlyMap<number, never> = new Map<number, never>()
