/**
 * @module core/guards/reply/instructions-pins
 * The reply guard of server instructions pinning, `instructions_pins` (`TOOL_PINNING`;
 * docs/pinning.md "Server instructions"): the `instructions` of a relayed `initialize` or
 * `server/discover` answer are decided against the origin's pin (pinning/instructions-pin.ts
 * `holdInstructions`); under `enforce` the answer waits and goes out without `instructions` while
 * they are not approved. A holding guard: last in the reply chain. Pure and runtime-neutral.
 */
import type { Config } from '../../config'
import { pinBook } from '../../exchange'
import { holdInstructions } from '../../pinning/instructions-pin'
import type { ReplyGuard } from '../guard'
import { heldText } from './list-pins'

/** The `instructions_pins` guard, or null when `TOOL_PINNING` is `off`. */
export function instructionsPinsGuard(config: Config): ReplyGuard | null {
  if (config.toolPinning === 'off') return null
  return {
    name: 'instructions_pins',
    phase: 'reply',
    stage: 'hold',
    reads: 'message',
    appliesTo: (method) => method === 'initialize' || method === 'server/discover',
    check({ msg, text }, ctx) {
      const { ex } = ctx.relay!
      return heldText(text, holdInstructions(pinBook(ex.deps), { originId: ex.target.id, msg, source: text }))
    },
  }
}
