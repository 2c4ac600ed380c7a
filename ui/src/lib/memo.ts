/**
 * A least-recently-used cache keyed by strings, bounded by entry count and by the total length
 * of its keys (the keys are source text: a code block, a formula). While a reply streams, the
 * blocks already finished are looked up every frame and so stay; the growing last block leaves a
 * trail of stale prefixes, which are the first to go.
 */
export class Lru<V> {
  readonly #entries = new Map<string, V>();
  #chars = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxChars: number,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The value cached for `key`, else `compute()`, cached unless `keep()` says no. */
  get(key: string, compute: () => V, keep: () => boolean = () => true): V {
    const entries = this.#entries;
    if (entries.has(key)) {
      const hit = entries.get(key) as V;
      entries.delete(key);
      entries.set(key, hit);
      return hit;
    }
    const value = compute();
    if (key.length > this.maxChars || !keep()) return value;
    entries.set(key, value);
    this.#chars += key.length;
    for (const oldest of entries.keys()) {
      if (entries.size <= this.maxEntries && this.#chars <= this.maxChars) break;
      entries.delete(oldest);
      this.#chars -= oldest.length;
    }
    return value;
  }
}
