/**
 * What the gateway keeps between requests: whole objects (bytes and the headers of their 200 answer) and
 * "no such object" verdicts. Two implementations: `MemoryCache` (in the process) and `RedisCache` (a
 * memory cache in front of Redis, shared by every gateway instance).
 */

export interface CachedObject {
  readonly kind: 'object';
  readonly body: Buffer;
  readonly etag: string;
  /** Headers of the full 200 answer, lower-case names, computed once when the entry is made. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface CachedMissing {
  readonly kind: 'missing';
}

export type CacheEntry = CachedObject | CachedMissing;

export interface GatewayCache {
  /** The entry in this process, if any and not expired (synchronous: the hot path). */
  getLocal(key: string): CacheEntry | undefined;
  /** The entry in the shared tier (Redis), copied into this process; undefined when there is none. */
  getShared(key: string): Promise<CacheEntry | undefined>;
  /** Keeps an entry for `ttlMs`, filed under its dataset so `dropDataset` finds it. */
  set(datasetId: string, key: string, entry: CacheEntry, ttlMs: number): Promise<void>;
  /** Forgets every entry of a dataset, on every instance. */
  dropDataset(datasetId: string): Promise<void>;
  /** Forgets the entries of these keys, on every instance. */
  dropKeys(keys: string[]): Promise<void>;
  /** Called when another instance dropped a dataset (its visibility answer must go too). */
  onDatasetDropped(listener: (datasetId: string) => void): void;
  close(): Promise<void>;
}

/** Bytes an entry is charged for: its body plus a flat allowance for the key, headers and bookkeeping. */
export function entryCost(key: string, entry: CacheEntry): number {
  return 512 + key.length + (entry.kind === 'object' ? entry.body.length : 0);
}
