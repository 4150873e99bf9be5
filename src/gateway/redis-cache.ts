/**
 * The gateway cache shared by instances (CACHE_REDIS_URL): each object is one Redis value with a PX
 * time-to-live, each dataset a set of its keys (so a dataset can be purged), and purges are announced on a
 * pub/sub channel so every instance also drops its in-process copies at once. A `MemoryCache` sits in
 * front, so a hot object costs no round trip. Redis trouble degrades to misses, never to failed requests.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../core/log.js';
import { applyDrop, cachedObject, type CacheDrop, type CacheEntry, type GatewayCache } from './gateway-cache.js';
import { MemoryCache } from './memory-cache.js';

export interface RedisCacheOptions {
  url: string;
  /** Bound of the in-process tier, in bytes. */
  maxLocalBytes: number;
  log: Logger;
  now?: () => number;
  /** Key prefix and channel name base; default `nds:gw:`. */
  prefix?: string;
}

/** Longest life of any entry: a dataset's key set outlives none of its members. */
const MAX_TTL_MS = 86_400_000;

export class RedisCache implements GatewayCache {
  readonly #local: MemoryCache;
  readonly #redis: Redis;
  readonly #sub: Redis;
  readonly #prefix: string;
  readonly #channel: string;
  readonly #id = Math.random().toString(36).slice(2);
  readonly #log: Logger;
  readonly #listeners: Array<(datasetId: string) => void> = [];
  readonly #ready: Promise<void>;

  constructor(options: RedisCacheOptions) {
    this.#local = new MemoryCache(options.maxLocalBytes, options.now);
    this.#prefix = options.prefix ?? 'nds:gw:';
    this.#channel = `${this.#prefix}purge`;
    this.#log = options.log;
    const redisOptions = { maxRetriesPerRequest: 2, enableAutoPipelining: true } as const;
    this.#redis = new Redis(options.url, redisOptions);
    this.#sub = new Redis(options.url, redisOptions);
    for (const conn of [this.#redis, this.#sub]) conn.on('error', (err: Error) => this.#log.warn({ err: err.message }, 'gateway cache: redis error'));
    this.#sub.on('message', (_channel: string, text: string) => this.#onPurge(text));
    this.#ready = this.#sub.subscribe(this.#channel).then(
      () => undefined,
      (err: Error) => this.#log.warn({ err: err.message }, 'gateway cache: cannot subscribe to purges'),
    );
  }

  /** Resolves once this instance hears purges from the others. */
  ready(): Promise<void> {
    return this.#ready;
  }

  getLocal(key: string): CacheEntry | undefined {
    return this.#local.getLocal(key);
  }

  async getShared(key: string): Promise<CacheEntry | undefined> {
    try {
      const [[, value], [, pttl]] = (await this.#redis.multi().getBuffer(this.#objectKey(key)).pttl(this.#objectKey(key)).exec()) as [
        [unknown, Buffer | null],
        [unknown, number],
      ];
      if (!value || pttl <= 0) return undefined;
      const entry = decodeEntry(value);
      if (!entry) return undefined;
      this.#local.setLocal(datasetOf(key), key, entry, pttl);
      return entry;
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'gateway cache: redis read failed');
      return undefined;
    }
  }

  async set(datasetId: string, key: string, entry: CacheEntry, ttlMs: number): Promise<void> {
    this.#local.setLocal(datasetId, key, entry, ttlMs);
    const setKey = this.#datasetKey(datasetId);
    try {
      await this.#redis
        .multi()
        .set(this.#objectKey(key), encodeEntry(entry), 'PX', Math.max(1, Math.round(ttlMs)))
        .sadd(setKey, key)
        .pexpire(setKey, MAX_TTL_MS)
        .exec();
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'gateway cache: redis write failed');
    }
  }

  async dropDataset(datasetId: string): Promise<void> {
    this.#local.dropDatasetLocal(datasetId);
    const setKey = this.#datasetKey(datasetId);
    const keys = await this.#redis.smembers(setKey);
    await this.#redis.del(setKey, ...keys.map((k) => this.#objectKey(k)));
    await this.#publish({ from: this.#id, dataset: datasetId });
  }

  async dropKeys(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    this.#local.dropKeysLocal(keys);
    await this.#redis.del(...keys.map((k) => this.#objectKey(k)));
    await this.#publish({ from: this.#id, keys });
  }

  async dropPrefixes(prefixes: string[]): Promise<void> {
    if (prefixes.length === 0) return;
    this.#local.dropPrefixesLocal(prefixes);
    for (const p of prefixes) await this.#deleteMatching(`${this.#objectKey(globEscape(p))}*`);
    await this.#publish({ from: this.#id, prefixes });
  }

  /** Every key of this cache (objects and dataset sets) goes; other users of the Redis database are untouched. */
  async dropAll(): Promise<void> {
    this.#local.dropAllLocal();
    await this.#deleteMatching(`${globEscape(this.#prefix)}*`);
    await this.#publish({ from: this.#id, everything: true });
  }

  onDatasetDropped(listener: (datasetId: string) => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    await this.#local.close();
    await Promise.allSettled([this.#sub.quit(), this.#redis.quit()]);
  }

  /** SCAN, not KEYS: a large cache must not block Redis for the other instances. */
  async #deleteMatching(pattern: string): Promise<void> {
    const stream = this.#redis.scanStream({ match: pattern, count: 1000 });
    for await (const batch of stream as AsyncIterable<string[]>) if (batch.length > 0) await this.#redis.unlink(...batch);
  }

  async #publish(message: CacheDrop): Promise<void> {
    await this.#redis.publish(this.#channel, JSON.stringify(message));
  }

  #onPurge(text: string): void {
    let message: CacheDrop;
    try {
      message = JSON.parse(text) as CacheDrop;
    } catch {
      return;
    }
    if (message?.from === this.#id) return;
    const dataset = applyDrop(this.#local, message);
    if (dataset !== undefined) for (const listener of this.#listeners) listener(dataset);
  }

  #objectKey(key: string): string {
    return `${this.#prefix}o:${key}`;
  }

  #datasetKey(datasetId: string): string {
    return `${this.#prefix}d:${datasetId}`;
  }
}

/** A literal for a Redis glob pattern (`*`, `?`, `[`, `]` and `\\` escaped). */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

function datasetOf(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

/** One Redis value: a 4-byte length, the JSON of the entry's metadata, then the body. */
export function encodeEntry(entry: CacheEntry): Buffer {
  const meta = Buffer.from(JSON.stringify(entry.kind === 'object' ? { kind: 'object', etag: entry.etag, headers: entry.headers } : { kind: 'missing' }));
  const head = Buffer.alloc(4);
  head.writeUInt32BE(meta.length);
  return entry.kind === 'object' ? Buffer.concat([head, meta, entry.body]) : Buffer.concat([head, meta]);
}

export function decodeEntry(value: Buffer): CacheEntry | undefined {
  if (value.length < 4) return undefined;
  const n = value.readUInt32BE(0);
  if (value.length < 4 + n) return undefined;
  const meta = JSON.parse(value.subarray(4, 4 + n).toString('utf8')) as { kind: string; etag?: string; headers?: Record<string, string> };
  if (meta.kind === 'missing') return { kind: 'missing' };
  if (meta.kind !== 'object' || typeof meta.etag !== 'string' || !meta.headers) return undefined;
  return cachedObject(value.subarray(4 + n), meta.etag, meta.headers);
}
