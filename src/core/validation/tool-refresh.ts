/**
 * @module core/validation/tool-refresh
 * Refreshing an origin's tool list (docs/design.md D7): the pull runs under the refresh policy
 * (refresh-policy.ts: single flight per origin and caller scope, `REFRESH_MIN_INTERVAL_MS`,
 * `REFRESH_BUDGET_PER_MIN` per origin), and a successful one replaces what the registry holds:
 * the scopes' memory entries are dropped (tool-invalidation.ts), the tools learned into the scope
 * the list's `cacheScope` says (tool-learning.ts, caller-scope.ts `listScope`), and the list's own
 * record written (pulled-lists.ts). Resolves true or false, never rejects (D16: callers fail open).
 */
import type { ProtocolVersion } from '../jsonrpc/versions'
import { PullError } from '../errors'
import type { LogRecord } from '../ports'
import { listScope, PUBLIC_SCOPE } from './caller-scope'
import type { PulledLists } from './pulled-lists'
import type { RefreshPolicy } from './refresh-policy'
import type { ToolInvalidation } from './tool-invalidation'
import type { ToolLearning } from './tool-learning'

/**
 * Fetches an origin's whole tool list (all pages) with the edge's own client session, on behalf of
 * one caller (its authorization). `cacheScope` is the origin's hint as found on the pages
 * (docs/protocol-rules.md M39): it decides where the list is stored. `ttlMs` is the origin's
 * freshness hint in ms. Rejects when the pull failed.
 */
export type ToolListPuller = () => Promise<{ tools: unknown[]; era: ProtocolVersion; ttlMs?: number; cacheScope?: unknown }>

/** What {@link ToolRefresh} runs under and stores through. */
export interface ToolRefreshParts {
  policy: RefreshPolicy
  invalidation: ToolInvalidation
  learning: ToolLearning
  lists: PulledLists
  /** The clock, epoch ms. */
  now: () => number
  /** Receives `registry.refresh` for a pull that succeeded (`ok`, `tools`, `ms`); must not throw, guarded anyway. */
  onEvent?: ((record: LogRecord) => void) | undefined
}

/** Pulls and stores tool lists: see the module comment. */
export class ToolRefresh {
  constructor(private readonly parts: ToolRefreshParts) {}

  /**
   * Refreshes an origin's tool list once: concurrent callers share one pull; a pull is not
   * repeated within the interval, nor past the origin's budget.
   * @param scope the caller's scope (single flight and rate limit are per origin and caller, since
   *   the pull carries the caller's authorization); the list is stored under `public` or under this
   *   scope as its `cacheScope` says. A private list pulled for the `public` scope has nowhere to
   *   go: it is not stored and the refresh counts as failed.
   * @returns true when a pull succeeded (now or recently), false when it failed or was refused
   */
  refresh(originId: string, scope: string, pull: ToolListPuller): Promise<boolean> {
    const { policy, invalidation, learning, lists, now } = this.parts
    const started = now()
    return policy.run(originId, scope, async () => {
      const { tools, era, ttlMs, cacheScope } = await pull()
      const dest = listScope(cacheScope, era, scope === PUBLIC_SCOPE ? undefined : scope)
      if (dest === null) throw new PullError('private-without-scope')
      // Forget every cached entry of this origin and caller first, so negative entries do not outlive the pull.
      invalidation.pulled(originId, new Set([scope, dest]))
      const names = await learning.learn(originId, dest, tools, era, ttlMs)
      // The list's record, and the deletion of the records of tools it no longer names.
      await lists.stored(originId, dest, names, now(), ttlMs)
      // A failed or refused pull is logged by the policy (refresh-policy.ts).
      this.event({
        level: 'info',
        msg: 'registry.refresh',
        origin: originId,
        scope: dest === PUBLIC_SCOPE ? 'public' : 'private',
        ok: true,
        tools: names.length,
        ms: now() - started,
      })
      return names
    })
  }

  /** Sends one event, never throwing. */
  private event(record: LogRecord): void {
    try {
      this.parts.onEvent?.(record)
    } catch {
      // a failing log sink must not fail a pull
    }
  }
}
