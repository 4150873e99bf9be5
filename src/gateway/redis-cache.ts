/**
 * The gateway cache shared by instances (CACHE_REDIS_URL): each object is one Redis value with a PX
 * time-to-live, each dataset a set of its keys (so a dataset can be purged), and purges are announced on a
 * pub/sub channel so every instance also drops its in-process copies at once. A `MemoryCache` sits in
 * front, so a hot object costs no round trip.
 *
 * Redis trouble degrades to misses, never to failed or slow requests: every command has a short timeout, and
 * a circuit breaker stops asking Redis after a failure (a refused or closed connection, a timeout) until a
 * probe after a cool-down, or the reconnection, shows it back. While it is down, the outage is logged once;
 * drops this instance makes are kept and made in Redis (and announced) when it is back; and since drops the
 * others announced meanwhile were not heard, the in-process tier is emptied when the subscription returns.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { CircuitBreaker, type BreakerState } from '../core/circuit-breaker.js';
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
  /** Longest wait for one Redis command, in ms; a slower answer counts as a failure. Default 500. */
  timeoutMs?: number;
  /** How long Redis is left alone after a failure before one request tries it again, in ms. Default 1000. */
  coolDownMs?: number;
}

/** Longest life of any entry: a dataset's key set outlives none of its members. */
const MAX_TTL_MS = 86_400_000;
/** Drops kept while Redis is down; past this, everything is dropped when it is back. */
const MAX_PENDING_DROPS = 1000;

export class RedisCache implements GatewayCache {
  readonly #local: MemoryCache;
  readonly #redis: Redis;
  readonly #sub: Redis;
  readonly #prefix: string;
  readonly #channel: string;
  readonly #id = Math.random().toString(36).slice(2);
  readonly #log: Logger;
  readonly #listeners: Array<(datasetId: string) => void> = [];
  readonly #breaker: CircuitBreaker;
  readonly #ready: Promise<void>;
  /** Redis answered once: from then on a connection that is not ready is an outage, not the start. */
  #connected = false;
  /** An outage is under way (and was logged). */
  #down = false;
  #closing = false;
  /** Drops this instance could not make in Redis nor announce; made when Redis is back. */
  #pendingDrops: CacheDrop[] = [];

  get bytes(): number {
    return this.#local.bytes;
  }

  get sharedCircuit(): BreakerState {
    return this.#breaker.state;
  }

  constructor(options: RedisCacheOptions) {
    this.#local = new MemoryCache(options.maxLocalBytes, options.now);
    this.#prefix = options.prefix ?? 'nds:gw:';
    this.#channel = `${this.#prefix}purge`;
    this.#log = options.log;
    this.#breaker = new CircuitBreaker(options.coolDownMs ?? 1000, options.now);
    // A command in flight when the connection drops fails at once (no retries); reconnection is tried
    // every second at most, so Redis is used again within about a second of its return.
    const common: RedisOptions = { maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: (times: number) => Math.min(times * 100, 1000) };
    this.#redis = new Redis(options.url, { ...common, enableAutoPipelining: true, commandTimeout: options.timeoutMs ?? 500 });
    // The subscriber re-subscribes itself on every (re)connection, below; nothing waits on its commands.
    this.#sub = new Redis(options.url, { ...common, autoResubscribe: false });
    this.#redis.on('error', (err: Error) => this.#failed(err));
    this.#redis.on('close', () => {
      if (this.#connected && !this.#closing) this.#failed(new Error('connection closed'));
    });
    this.#redis.on('ready', () => this.#back());
    this.#sub.on('error', () => {});
    this.#sub.on('message', (_channel: string, text: string) => this.#onPurge(text));
    let subscribed: () => void;
    this.#ready = new Promise((resolve) => (subscribed = resolve));
    let subscribedBefore = false;
    this.#sub.on('ready', () => {
      this.#sub.subscribe(this.#channel).then(
        () => {
          // Drops announced while this instance was not listening were missed: its own copies may be stale.
          if (subscribedBefore) this.#local.dropAllLocal();
          subscribedBefore = true;
          subscribed();
        },
        () => {},
      );
    });
  }

  /** Resolves once this instance hears purges from the others. */
  ready(): Promise<void> {
    return this.#ready;
  }

  getLocal(key: string): CacheEntry | undefined {
    return this.#local.getLocal(key);
  }

  async getShared(key: string): Promise<CacheEntry | undefined> {
    if (!this.#usable()) return undefined;
    try {
      const [[, value], [, pttl]] = (await this.#redis.multi().getBuffer(this.#objectKey(key)).pttl(this.#objectKey(key)).exec()) as [
        [unknown, Buffer | null],
        [unknown, number],
      ];
      this.#succeeded();
      if (!value || pttl <= 0) return undefined;
      const entry = decodeEntry(value);
      if (!entry) return undefined;
      this.#local.setLocal(datasetOf(key), key, entry, pttl);
      return entry;
    } catch (err) {
      this.#failed(err);
      return undefined;
    }
  }

  async set(datasetId: string, key: string, entry: CacheEntry, ttlMs: number): Promise<void> {
    this.#local.setLocal(datasetId, key, entry, ttlMs);
    if (!this.#usable()) return;
    const setKey = this.#datasetKey(datasetId);
    try {
      await this.#redis
        .multi()
        .set(this.#objectKey(key), encodeEntry(entry), 'PX', Math.max(1, Math.round(ttlMs)))
        .sadd(setKey, key)
        .pexpire(setKey, MAX_TTL_MS)
        .exec();
      this.#succeeded();
    } catch (err) {
      this.#failed(err);
    }
  }

  async dropDataset(datasetId: string): Promise<void> {
    this.#local.dropDatasetLocal(datasetId);
    await this.#share({ from: this.#id, dataset: datasetId });
  }

  async dropKeys(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    this.#local.dropKeysLocal(keys);
    await this.#share({ from: this.#id, keys });
  }

  async dropPrefixes(prefixes: string[]): Promise<void> {
    if (prefixes.length === 0) return;
    this.#local.dropPrefixesLocal(prefixes);
    await this.#share({ from: this.#id, prefixes });
  }

  /** Every key of this cache (objects and dataset sets) goes; other users of the Redis database are untouched. */
  async dropAll(): Promise<void> {
    this.#local.dropAllLocal();
    await this.#share({ from: this.#id, everything: true });
  }

  onDatasetDropped(listener: (datasetId: string) => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    this.#closing = true;
    await this.#local.close();
    // QUIT waits for a connection being made: a connection that is not ready is just dropped.
    const end = (r: Redis) => (r.status === 'ready' ? r.quit() : Promise.resolve(r.disconnect()));
    await Promise.allSettled([end(this.#sub), end(this.#redis)]);
  }

  /**
   * Whether to ask Redis now. On a ready connection, the breaker decides (it is open for a cool-down after
   * a timeout). Otherwise Redis is not asked until it is back, except while the first connection is being
   * made: then a command waits for it (at most the timeout).
   */
  #usable(): boolean {
    if (this.#redis.status === 'ready') return this.#breaker.allow();
    return !this.#connected && !this.#down && this.#breaker.allow();
  }

  #succeeded(): void {
    if (this.#down || this.#breaker.state !== 'closed') this.#back();
  }

  #failed(err: unknown): void {
    this.#breaker.failed();
    if (this.#down || this.#closing) return;
    this.#down = true;
    this.#log.warn({ err: (err as Error)?.message }, 'gateway cache: Redis unavailable; answering from memory and the object store until it is back');
  }

  /** Redis answers again (reconnected, or a probe succeeded): use it, and make the drops it missed. */
  #back(): void {
    this.#connected = true;
    this.#breaker.succeeded();
    if (!this.#down) return;
    this.#down = false;
    this.#log.info({ pendingDrops: this.#pendingDrops.length }, 'gateway cache: Redis is back');
    void this.#replayDrops();
  }

  /** Makes a drop in Redis and announces it; kept for later when Redis cannot be asked or fails. */
  async #share(drop: CacheDrop): Promise<boolean> {
    if (!this.#usable()) {
      this.#keep(drop);
      return false;
    }
    try {
      await this.#dropInRedis(drop);
      await this.#redis.publish(this.#channel, JSON.stringify(drop));
      this.#succeeded();
      return true;
    } catch (err) {
      this.#failed(err);
      this.#keep(drop);
      return false;
    }
  }

  #keep(drop: CacheDrop): void {
    if (this.#pendingDrops.length >= MAX_PENDING_DROPS) this.#pendingDrops = [{ from: this.#id, everything: true }];
    else if (!this.#pendingDrops[0]?.everything) this.#pendingDrops.push(drop);
  }

  async #replayDrops(): Promise<void> {
    const drops = this.#pendingDrops.splice(0);
    for (let i = 0; i < drops.length; i++) {
      if (!(await this.#share(drops[i]!))) {
        for (const rest of drops.slice(i + 1)) this.#keep(rest);
        return;
      }
    }
  }

  async #dropInRedis(drop: CacheDrop): Promise<void> {
    if (drop.everything) {
      await this.#deleteMatching(`${globEscape(this.#prefix)}*`);
      return;
    }
    if (drop.dataset !== undefined) {
      const setKey = this.#datasetKey(drop.dataset);
      const keys = await this.#redis.smembers(setKey);
      await this.#redis.del(setKey, ...keys.map((k) => this.#objectKey(k)));
    }
    if (drop.keys?.length) await this.#redis.del(...drop.keys.map((k) => this.#objectKey(k)));
    for (const p of drop.prefixes ?? []) await this.#deleteMatching(`${this.#objectKey(globEscape(p))}*`);
  }

  /** SCAN, not KEYS: a large cache must not block Redis for the other instances. */
  async #deleteMatching(pattern: string): Promise<void> {
    const stream = this.#redis.scanStream({ match: pattern, count: 1000 });
    for await (const batch of stream as AsyncIterable<string[]>) if (batch.length > 0) await this.#redis.unlink(...batch);
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
