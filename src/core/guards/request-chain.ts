/**
 * @module core/guards/request-chain
 * The request guards of one configuration as one ordered list, and the run of that list over one
 * JSON-RPC request (docs/design.md §2, "The chain of guards"). The order is the order of effects:
 * 1. `token` (auth on): the bearer token, once per HTTP request at the front door (`at: 'http'`);
 * 2. `rate_budget` (`RATE_LIMIT`): the caller's budgets, charged for every message;
 * 3. `tool_filter` (`TOOLS_ALLOW` / `TOOLS_DENY`, global or an origin's): a hidden tool reads as unknown; after the charge,
 *    so a hidden tool costs what a missing one costs;
 * 4. `tool_scopes` (`TOOL_SCOPES`, auth on): after the filter, so a hidden tool is never "out of scope";
 * 5. `tool_pins` (`TOOL_PINNING=enforce`): an unapproved definition is never called;
 * 6. `arguments`: the call's arguments against the (approved) `inputSchema`; forwards what it accepts.
 * A single request and each batch element run the same list through {@link runRequestGuards}; the
 * first refusal wins. Pure and runtime-neutral.
 */
import type { Config } from '../config'
import type { GuardedRequest, RequestGuard, RequestGuardContext, RequestVerdict } from './guard'
import { tokenGuard } from './request/token'
import { rateBudgetGuard } from './request/rate-budget'
import { hasToolFilter, toolFilterGuard } from './request/tool-filter'
import { toolScopesGuard } from './request/tool-scopes'
import { toolPinsGuard } from './request/tool-pins'
import { argumentsGuard } from './request/arguments'

/**
 * Each factory returns the guard one setting asks for, or null when its setting leaves it out. The
 * factories are listed here in chain order (the one place a request guard is added).
 */
const requestGuardFactories: readonly ((config: Config) => RequestGuard | null)[] = [
  (config) => (config.authIssuer ? tokenGuard : null),
  rateBudgetGuard,
  (config) => (hasToolFilter(config) ? toolFilterGuard : null),
  (config) => (config.authIssuer ? toolScopesGuard : null),
  toolPinsGuard,
  () => argumentsGuard,
]

const chains = new WeakMap<Config, readonly RequestGuard[]>()
const messageChains = new WeakMap<Config, readonly RequestGuard[]>()

/** The request guards of `config` in chain order (the token guard included), built once per configuration object. */
export function requestChain(config: Config): readonly RequestGuard[] {
  let chain = chains.get(config)
  if (!chain) chains.set(config, (chain = requestGuardFactories.map((f) => f(config)).filter((g): g is RequestGuard => g !== null)))
  return chain
}

/** {@link requestChain} without the guards that run per HTTP request (the token): the list each JSON-RPC request goes through. */
export function messageChain(config: Config): readonly RequestGuard[] {
  let chain = messageChains.get(config)
  if (!chain) messageChains.set(config, (chain = requestChain(config).filter((g) => g.at === 'message')))
  return chain
}

const PASSED: RequestVerdict = { kind: 'pass' }

/**
 * Runs `chain` over one request from guard `from` on: each guard that applies to its method, in
 * order, until one denies or forwards it. Synchronous until a guard returns a promise; the rest of
 * the chain then runs after it. `info` a guard passes on is added to `ctx.info` for the later ones.
 * @returns `deny` (answer locally), `forward` (with the pending entry the last guard built), or
 *   `pass` when no guard decided (the caller forwards with `ctx.info`)
 */
export function runRequestGuards(chain: readonly RequestGuard[], c: GuardedRequest, ctx: RequestGuardContext, from = 0): RequestVerdict | Promise<RequestVerdict> {
  for (let i = from; i < chain.length; i++) {
    const g = chain[i]!
    if (!g.appliesTo(c.method)) continue
    const v = g.check(c, ctx)
    if (v instanceof Promise) return v.then((r) => (r.kind === 'pass' ? (note(ctx, r), runRequestGuards(chain, c, ctx, i + 1)) : r))
    if (v.kind !== 'pass') return v
    note(ctx, v)
  }
  return PASSED
}

function note(ctx: RequestGuardContext, v: Extract<RequestVerdict, { kind: 'pass' }>): void {
  if (v.info) Object.assign(ctx.info, v.info)
}
