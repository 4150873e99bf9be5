/**
 * What the gateway keeps between requests: whole objects (bytes and the headers of their 200 answer) and
 * "no such object" verdicts. Two implementations: `MemoryCache` (in the process) and `RedisCache` (a
 * memory cache in front of Redis, shared by every gateway instance).
 */
import type { BreakerState } from '../core/circuit-breaker.js';
import { headerList, type HeaderList } from './object-answers.js';

export interface CachedObject {
  readonly kind: 'object';
  readonly body: Buffer;
  readonly etag: string;
  /** Headers of the full 200 answer, lower-case names, computed once when the entry is made. */
  readonly headers: Readonly<Record<string, string>>;
  /** `headers` as a list, for a 200. */
  readonly fullList: HeaderList;
  /** `headers` without Content-Length, for a 206 (which adds its own). */
  readonly partialList: HeaderList;
}

/** An object entry, with its header lists built once (a hit then only appends CORS and X-Cache). */
export function cachedObject(body: Buffer, etag: string, headers: Readonly<Record<string, string>>): CachedObject {
  return { kind: 'object', body, etag, headers, fullList: headerList(headers), partialList: headerList(headers, 'content-length') };
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
  /**
   * The shared tier's count of drops that touched this dataset (Redis), or undefined when there is no shared
   * tier or it cannot be asked now. The gateway reads it before the dataset's visibility and hands it to `set`.
   */
  fillEpoch(datasetId: string): Promise<string | undefined>;
  /**
   * Keeps an entry for `ttlMs`, filed under its dataset so `dropDataset` finds it. The shared tier keeps it only
   * when `epoch` is given and is still the dataset's `fillEpoch`: a fill that began before another instance
   * dropped the dataset (made it private, say) must not outlive that drop. Answers false when the visibility
   * answer that came with `epoch` is to be taken again: the shared tier refused the entry for a drop since
   * `epoch` (then this process keeps no copy either), or no epoch was read (Redis was away) and the shared tier
   * can be asked now (then this process keeps the entry to itself).
   */
  set(datasetId: string, key: string, entry: CacheEntry, ttlMs: number, epoch?: string): Promise<boolean>;
  /** Forgets every entry of a dataset, on every instance. */
  dropDataset(datasetId: string): Promise<void>;
  /** Forgets the entries of these keys, on every instance. */
  dropKeys(keys: string[]): Promise<void>;
  /** Forgets the entries whose keys start with one of these (`` matches all), on every instance. */
  dropPrefixes(prefixes: string[]): Promise<void>;
  /** Forgets every entry, on every instance. */
  dropAll(): Promise<void>;
  /**
   * Called with every drop heard from another instance, or made up for (drops missed while Redis was away):
   * the dataset it names, if it names one (its visibility answer must go too). A fill under way must not keep
   * what it read.
   */
  onDropHeard(listener: (datasetId: string | undefined) => void): void;
  /** Bytes of the entries this process holds (the metrics' `nds_gateway_cache_bytes`). */
  readonly bytes: number;
  /** The state of the shared tier's circuit breaker (Redis); undefined when there is no shared tier. */
  readonly sharedCircuit: BreakerState | undefined;
  close(): Promise<void>;
}

/** A drop announced to the other instances (over Redis pub/sub, or the cluster's IPC channel). */
export interface CacheDrop {
  /** The announcing instance, which has applied the drop already. */
  from: string;
  dataset?: string;
  keys?: string[];
  prefixes?: string[];
  everything?: boolean;
}

/** The part of `MemoryCache` that applies a drop heard from another instance. */
export interface LocalDrops {
  dropDatasetLocal(datasetId: string): void;
  dropKeysLocal(keys: string[]): void;
  dropPrefixesLocal(prefixes: string[]): void;
  dropAllLocal(): void;
}

/**
 * Applies a drop heard from another instance to this process's entries; a malformed message drops
 * nothing. Returns false for a malformed message, else the dataset dropped if any (its visibility answer goes
 * too), or undefined.
 */
export function applyDrop(local: LocalDrops, message: unknown): string | undefined | false {
  if (message === null || typeof message !== 'object') return false;
  const m = message as Partial<Record<keyof CacheDrop, unknown>>;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  if (m.everything === true) local.dropAllLocal();
  if (Array.isArray(m.keys)) local.dropKeysLocal(strings(m.keys));
  if (Array.isArray(m.prefixes)) local.dropPrefixesLocal(strings(m.prefixes));
  if (typeof m.dataset === 'string') {
    local.dropDatasetLocal(m.dataset);
    return m.dataset;
  }
  return undefined;
}

/** Bytes an entry is charged for: its body plus a flat allowance for the key, headers and bookkeeping. */
export function entryCost(key: string, entry: CacheEntry): number {
  return 512 + key.length + (entry.kind === 'object' ? entry.body.length : 0);
}
