/**
 * @module core/grading/reply-guards
 * The reply guards of one configuration as one ordered list (docs/design.md §2, "The chain of
 * guards"): the one place a reply guard is added. Here rather than beside the request chain
 * (guards/request-chain.ts) because grading is one of them and sits on the floor above the guards.
 * The list is run by guards/reply-chain.ts `runReplyGuards` on every reply path: the reply grader
 * (a JSON body, each SSE event, each batch element; grading/reply-grader.ts) and the edge's own
 * tool-list pull (call-context.ts). What each guard does, and why in this order: the reply guard
 * table of docs/design.md §2.
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
  // Hidden tools leave a list before anything learns or decides them.
  listFilterGuard,
  // Hidden characters before secrets: a token split by a zero-width character is whole again once stripped;
  // secrets before truncation: a secret cut in two would be neither found nor whole.
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
