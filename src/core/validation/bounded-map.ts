/**
 * @module core/validation/bounded-map
 * The bounded memory of the tool registry: a Map that evicts its oldest entries past a bound, with
 * the CLOCK approximation of LRU. Pure.
 */

/** A Map that drops its oldest entries (insertion order) beyond `max`; entries marked `used` get a second chance. */
export class BoundedMap<K, V extends { used?: boolean }> extends Map<K, V> {
  /**
   * @param max entries kept
   * @param onEvict called with each entry dropped to make room (not for a `delete` or a replaced
   *   value); must not throw
   */
  constructor(
    private readonly max: number,
    private readonly onEvict?: (key: K, value: V) => void
  ) {
    super()
  }
  /**
   * Adds or replaces an entry; past the bound, evicts in insertion order but gives entries marked
   * `used` a second chance (moved to the end, mark cleared): the CLOCK approximation of LRU. A hit
   * only sets `used` instead of a delete and re-insert per call (a profile of the hot path).
   */
  override set(key: K, value: V): this {
    if (this.has(key)) this.delete(key)
    super.set(key, value)
    while (this.size > this.max && this.size > 1) {
      const [oldKey, oldValue] = this.entries().next().value as [K, V]
      this.delete(oldKey)
      // The entry just set is never the one to go: when every older entry was used, each gets its
      // second chance once and the sweep comes round to it again (it had dropped the new entry).
      if (oldKey === key || oldValue.used) {
        if (oldKey !== key) oldValue.used = false
        super.set(oldKey, oldValue)
      } else this.onEvict?.(oldKey, oldValue)
    }
    return this
  }
}
