/**
 * @module core/guards/reply/list-pins
 * The reply guard of tool pinning on lists, `list_pins` (`TOOL_PINNING`; docs/pinning.md): a
 * relayed `tools/list` answer (a JSON body, each SSE event, each batch element) is decided against
 * the origin's pins (pinning/apply-pins.ts `holdToolsList`). `audit` relays every list as it came
 * and decides it in the background, once per distinct list of a reply; `enforce` holds the answer
 * for the decision and relays it with the tools the pins do not approve left out (or the pins'
 * refusal). A holding guard: last in the reply chain, after the tool filter and grading. Pure and
 * runtime-neutral.
 */
import type { Config } from '../../config'
import { pinBook } from '../../exchange'
import { isObject } from '../../jsonrpc/jsonrpc'
import { holdToolsList } from '../../pinning/apply-pins'
import { listScope } from '../../validation/caller-scope'
import type { ReplyGuard, ReplyVerdict } from '../guard'

const PASS: ReplyVerdict = { kind: 'pass' }

/** The verdict for the text a hold gives: `pass` when it is the text as it was. */
export function heldText(before: string, held: string | Promise<string>): ReplyVerdict | Promise<ReplyVerdict> {
  const verdict = (text: string): ReplyVerdict => (text === before ? PASS : { kind: 'rewrite', text })
  return typeof held === 'string' ? verdict(held) : held.then(verdict)
}

/** The `list_pins` guard, or null when `TOOL_PINNING` is `off`. */
export function listPinsGuard(config: Config): ReplyGuard | null {
  if (config.toolPinning === 'off') return null
  return {
    name: 'list_pins',
    phase: 'reply',
    stage: 'hold',
    reads: 'message',
    appliesTo: (method) => method === 'tools/list',
    check({ msg, text }, ctx) {
      const { ex, p, repeat } = ctx.relay!
      const book = pinBook(ex.deps)
      // A copy of a list this reply carried before was decided with it (audit decides in the background).
      if (repeat && book.mode === 'audit') return PASS
      return heldText(
        text,
        holdToolsList(book, {
          originId: ex.target.id,
          scope: isObject(msg.result) ? listScope(msg.result.cacheScope, ex.era, ex.scope) : (ex.scope ?? null),
          id: p.id,
          paged: p.paged === true,
          ...(p.pull ? { pull: p.pull } : {}),
          msg,
          source: text,
        })
      )
    },
  }
}
