/**
 * @module core/validation/pulled-lists
 * The registry's bookkeeping of whole tool lists (as opposed to single tool records):
 * - after a full pull, the list's record in the store (`toollist:<originId>:<scope>`: names, hash,
 *   `fetchedAt`, the origin's `ttlMs`), and the deletion of the records of tools the previous list
 *   named and this one does not (tool-store.ts `putPulledList`; never rejects, a store that is
 *   down is cleaned up by the next pull); a private scope's list expires with its records;
 * - a lookup that finds no usable record of a tool the last pull listed (within the refresh
 *   interval, refresh-policy.ts keeps the names): the store lost the record (Redis came back
 *   empty, a corrupt record), so the interval is lifted for that scope and the next refresh pulls.
 */
import type { KvStore } from '../ports'
import { PUBLIC_SCOPE } from './caller-scope'
import type { PrivateScopes } from './private-scopes'
import type { RefreshPolicy } from './refresh-policy'
import { putPulledList } from './tool-store'

/** Whole-list records and the lost-record rule: see the module comment. */
export class PulledLists {
  /**
   * @param kv the KV namespace
   * @param policy the refresh policy: what the last pull of a scope listed, and its interval
   * @param privateScopes the `expirationTtl` of a private scope's keys
   */
  constructor(
    private readonly kv: KvStore,
    private readonly policy: RefreshPolicy,
    private readonly privateScopes: PrivateScopes
  ) {}

  /**
   * Records a full pull's `names` for `originId` in `scope` and deletes the records of tools it no
   * longer names. Never rejects.
   * @param now epoch ms, the list's `fetchedAt`
   * @param ttlMs the origin's freshness hint in ms, kept when positive
   */
  stored(originId: string, scope: string, names: string[], now: number, ttlMs?: number): Promise<void> {
    return putPulledList(this.kv, originId, scope, names, now, ttlMs, scope === PUBLIC_SCOPE ? undefined : this.privateScopes.putOptions)
  }

  /**
   * A lookup in `scope` found no usable record of `name`: when the last pull (within the interval)
   * listed it, that is a miss to refresh, not an unknown tool, and the interval is lifted for this
   * scope (single flight and the per-origin budget still hold).
   */
  missed(originId: string, scope: string, name: string): void {
    if (this.policy.listedByLastPull(originId, scope, name)) this.policy.forget(originId, scope)
  }
}
