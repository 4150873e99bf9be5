/**
 * The in-process gateway cache: least-recently-used eviction bounded by bytes, and a time-to-live per entry.
 * A `Map` keeps insertion order, so re-inserting on a hit makes the first key the least recently used one.
 */
import { entryCost, type CacheEntry, type GatewayCache } from './gateway-cache.js';

interface Slot {
  entry: CacheEntry;
  datasetId: string;
  expiresAt: number;
  cost: number;
}

export class MemoryCache implements GatewayCache {
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #slots = new Map<string, Slot>();
  #bytes = 0;

  /** `now` gives milliseconds (tests move it forward); `maxBytes` 0 keeps nothing. */
  constructor(maxBytes: number, now: () => number = Date.now) {
    this.#maxBytes = maxBytes;
    this.#now = now;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** A memory cache has no shared tier. */
  get sharedCircuit(): undefined {
    return undefined;
  }

  get size(): number {
    return this.#slots.size;
  }

  getLocal(key: string): CacheEntry | undefined {
    const slot = this.#slots.get(key);
    if (!slot) return undefined;
    if (slot.expiresAt <= this.#now()) {
      this.#remove(key, slot);
      return undefined;
    }
    this.#slots.delete(key);
    this.#slots.set(key, slot);
    return slot.entry;
  }

  async getShared(): Promise<CacheEntry | undefined> {
    return undefined;
  }

  /** One process: no shared tier, no epoch. */
  async fillEpoch(): Promise<undefined> {
    return undefined;
  }

  async set(datasetId: string, key: string, entry: CacheEntry, ttlMs: number): Promise<boolean> {
    this.setLocal(datasetId, key, entry, ttlMs);
    return true;
  }

  setLocal(datasetId: string, key: string, entry: CacheEntry, ttlMs: number): void {
    const cost = entryCost(key, entry);
    const old = this.#slots.get(key);
    if (old) this.#remove(key, old);
    if (cost > this.#maxBytes || ttlMs <= 0) return;
    while (this.#bytes + cost > this.#maxBytes) {
      const [oldestKey, oldest] = this.#slots.entries().next().value as [string, Slot];
      this.#remove(oldestKey, oldest);
    }
    this.#slots.set(key, { entry, datasetId, expiresAt: this.#now() + ttlMs, cost });
    this.#bytes += cost;
  }

  async dropDataset(datasetId: string): Promise<void> {
    this.dropDatasetLocal(datasetId);
  }

  /** A scan, not an index: purges are rare and the map holds at most a few thousand entries. */
  dropDatasetLocal(datasetId: string): void {
    for (const [key, slot] of this.#slots) if (slot.datasetId === datasetId) this.#remove(key, slot);
  }

  async dropKeys(keys: string[]): Promise<void> {
    this.dropKeysLocal(keys);
  }

  dropKeysLocal(keys: string[]): void {
    for (const key of keys) {
      const slot = this.#slots.get(key);
      if (slot) this.#remove(key, slot);
    }
  }

  async dropPrefixes(prefixes: string[]): Promise<void> {
    this.dropPrefixesLocal(prefixes);
  }

  dropPrefixesLocal(prefixes: string[]): void {
    if (prefixes.length === 0) return;
    for (const [key, slot] of this.#slots) if (prefixes.some((p) => key.startsWith(p))) this.#remove(key, slot);
  }

  async dropAll(): Promise<void> {
    this.dropAllLocal();
  }

  dropAllLocal(): void {
    this.#slots.clear();
    this.#bytes = 0;
  }

  onDropHeard(): void {
    // One process: the caller that drops a dataset already knows.
  }

  async close(): Promise<void> {
    this.dropAllLocal();
  }

  #remove(key: string, slot: Slot): void {
    this.#slots.delete(key);
    this.#bytes -= slot.cost;
  }
}
