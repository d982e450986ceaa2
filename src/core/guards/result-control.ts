/**
 * @module core/guards/result-control
 * `RESULT_CONTROL` (docs/result-checks.md#hidden-characters): characters in a tool result that a
 * person reading the transcript does not see but the model reads, or that drive the reader's
 * terminal: escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ST`, the other ECMA-48
 * string and two-character escapes, and their C1 forms), C0 controls other than tab, line feed and
 * carriage return, C1 controls (U+0080-U+009F), bidi controls (U+202A-U+202E, U+2066-U+2069) and
 * zero-width characters (U+200B-U+200D, U+2060, U+FEFF) and Unicode tag characters (U+E0000-U+E007F,
 * outside an emoji flag's tag sequence). `audit` (default) logs and counts them,
 * the answer unchanged byte for byte; `strip` removes them (a whole escape sequence, or the lone
 * character) and nothing else. DEL (U+007F), tab, line feed and carriage return are kept. The
 * detector is guards/control-scan.ts; it runs once per string of a result for this check and
 * `RESULT_SECRETS` together (guards/result-findings.ts), and a result with no hidden character
 * passes without a second walk. Pure and runtime-neutral.
 */
import type { ReplyGuard, ReplyGuardContext, ReplyUnderCheck, ReplyVerdict } from './guard'
import type { Config } from '../config'
import { visitResultText } from './result-text'
import { stripControls } from './control-scan'
import { resultFindings } from './result-findings'

export { findControls, stripControls, type ControlCategory, type ControlSpan } from './control-scan'

/** The guard of `RESULT_CONTROL`, or null when it is `off`. */
export function resultControlGuard(config: Config): ReplyGuard | null {
  const mode = config.resultControl
  if (mode === 'off') return null
  return {
    name: 'result_control',
    phase: 'reply',
    stage: mode === 'strip' ? 'mutate' : 'judge',
    reads: 'result',
    appliesTo: (method) => method === 'tools/call',
    check(under: ReplyUnderCheck, ctx: ReplyGuardContext): ReplyVerdict {
      const { result } = under
      const { controls } = resultFindings(under, false)
      if (controls.size === 0) return { kind: 'pass' }
      let n = 0
      const changed = visitResultText(result, (text, at) => {
        const spans = controls.get(n++)
        if (spans === undefined) return null
        const counts = new Map<string, number>()
        for (const sp of spans) counts.set(sp.category, (counts.get(sp.category) ?? 0) + 1)
        for (const [category, count] of counts) ctx.report?.({ check: 'result_control', category, action: mode, at: at(), count })
        return mode === 'strip' ? stripControls(text, spans) : null
      })
      return mode === 'strip' ? { kind: 'change', result: changed } : { kind: 'pass' }
    },
  }
}
