/**
 * @module core/grading/reply-guards
 * The reply guards of one configuration as one ordered list (docs/design.md §2, "The chain of
 * guards"): the one place a reply guard is added. Here rather than beside the request chain
 * (guards/request-chain.ts) because grading is one of them and sits on the floor above the guards.
 * The list is run by guards/reply-chain.ts `runReplyGuards` on every reply path: the reply grader
 * (a JSON body, each SSE event, each batch element; grading/reply-grader.ts) and the edge's own
 * tool-list pull (call-context.ts). In chain order:
 * 1. `list_filter` (`TOOLS_ALLOW` / `TOOLS_DENY`): hidden tools leave a `tools/list` result before anything learns from it;
 * 2. `result_control` (`RESULT_CONTROL`): hidden characters first, so a token split by a zero-width character is whole again;
 * 3. `result_secrets` (`RESULT_SECRETS`): before any truncation could cut a secret in two;
 * 4. `oversize_result` (`MAX_RESULT_TEXT_BYTES`, `OVERSIZE_RESULT`);
 * 5. `grading` (always): the grade, D10, D11 (`HIDDEN_FAILURES`);
 * 6. `output_schema` (`OUTPUT_SCHEMA`): D12 on the bytes the client gets;
 * 7. `list_pins` (`TOOL_PINNING`): a `tools/list` answer held for its tools' pins;
 * 8. `instructions_pins` (`TOOL_PINNING`): an `initialize` / `server/discover` answer held for its instructions' pin.
 * The chain is sorted by stage (guards/guard.ts `ReplyStage`: mutate, judge, hold), this order
 * within one: a result check in `audit` only judges, so it runs after the changing ones.
 */
import type { Config } from '../config'
import type { ReplyGuard } from '../guards/guard'
import { orderReplyGuards } from '../guards/reply-chain'
import { listFilterGuard } from '../guards/request/tool-filter'
import { resultControlGuard } from '../guards/result-control'
import { resultSecretsGuard } from '../guards/result-secrets'
import { oversizeResultGuard } from '../guards/oversize-result'
import { listPinsGuard } from '../guards/reply/list-pins'
import { instructionsPinsGuard } from '../guards/reply/instructions-pins'
import { gradingGuard, outputSchemaGuard } from './grading-guards'

/** Each factory returns the guard its setting asks for, or null when the setting leaves it out; in chain order. */
const replyGuardFactories: readonly ((config: Config) => ReplyGuard | null)[] = [
  listFilterGuard,
  resultControlGuard,
  resultSecretsGuard,
  oversizeResultGuard,
  gradingGuard,
  outputSchemaGuard,
  listPinsGuard,
  instructionsPinsGuard,
]

const chains = new WeakMap<Config, readonly ReplyGuard[]>()

/** The reply guards of `config` in chain order (module comment), built once per configuration object. */
export function replyChain(config: Config): readonly ReplyGuard[] {
  let chain = chains.get(config)
  if (!chain) chains.set(config, (chain = orderReplyGuards(replyGuardFactories.map((f) => f(config)).filter((g): g is ReplyGuard => g !== null))))
  return chain
}
