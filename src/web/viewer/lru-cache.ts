/** A small least-recently-used map, bounded by entry count (decoded chunks of similar size). */
export class LruCache<K, V> {
  readonly #limit: number;
  readonly #map = new Map<K, V>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    while (this.#map.size > this.#limit) this.#map.delete(this.#map.keys().next().value as K);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  get size(): number {
    return this.#map.size;
  }
}
