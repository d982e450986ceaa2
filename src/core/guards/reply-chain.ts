/**
 * @module core/guards/reply-chain
 * The reply guards of one configuration as one ordered list, and the run of that list over one
 * response (docs/design.md §2, "The chain of guards"). Order: guards that change a result first
 * (in the order given), then guards that only judge it, so a judgement covers the bytes the client
 * gets; the first `deny` ends the run. Pure and runtime-neutral.
 */
import type { Config } from '../config'
import type { ReplyGuard, ReplyGuardContext, ReplyVerdict } from './guard'
import { resultControlGuard } from './result-control'
import { resultSecretsGuard } from './result-secrets'
import { oversizeResultGuard } from './oversize-result'

/** The reply guards a configuration builds, in chain order; one list per configuration object. */
const chains = new WeakMap<Config, readonly ReplyGuard[]>()

/**
 * Each factory returns the guard one setting asks for, or null when its setting is `off`. The
 * factories are listed here in chain order (the one place a reply guard is added).
 */
const replyGuardFactories: readonly ((config: Config) => ReplyGuard | null)[] = [
  // Hidden characters first: a token split by a zero-width character is whole again once stripped.
  resultControlGuard,
  resultSecretsGuard,
  oversizeResultGuard,
]

/**
 * The reply guards of `config` in chain order (changing guards, then judging ones), built once per
 * configuration object.
 */
export function replyChain(config: Config): readonly ReplyGuard[] {
  let chain = chains.get(config)
  if (chain) return chain
  const built = replyGuardFactories.map((f) => f(config)).filter((g): g is ReplyGuard => g !== null)
  chain = [...built.filter((g) => g.changes), ...built.filter((g) => !g.changes)]
  chains.set(config, chain)
  return chain
}

/** What the chain made of one result: the result to relay (the input itself when nothing changed), or the first denial. */
export type ReplyChainOutcome =
  | { kind: 'pass'; result: Record<string, unknown>; changedBy: readonly string[] }
  | { kind: 'deny'; guard: string; verdict: Extract<ReplyVerdict, { kind: 'deny' }>; changedBy: readonly string[] }

/**
 * Runs `chain` over one response's `result`. Each guard sees the result as the guards before it
 * left it.
 * @returns `pass` with the (possibly changed) result and the names of the guards that changed it,
 *   or the first `deny`
 */
export function runReplyGuards(chain: readonly ReplyGuard[], result: Record<string, unknown>, ctx: ReplyGuardContext): ReplyChainOutcome {
  let current = result
  const changedBy: string[] = []
  for (const g of chain) {
    if (!g.appliesTo(ctx.method)) continue
    const v = g.check(current, ctx)
    if (v.kind === 'deny') return { kind: 'deny', guard: g.name, verdict: v, changedBy }
    if (v.kind === 'change') {
      current = v.result
      changedBy.push(g.name)
    }
  }
  return { kind: 'pass', result: current, changedBy }
}
