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
 *
 * A fill races drops made on other instances: instance B reads a chunk of a public dataset while A makes it
 * private and drops it. B must not put the chunk in Redis after A's drop, where every instance would serve it
 * to anyone for a day. So each drop first counts up an epoch of the dataset in Redis (`nds:gw:e:<id>`, and
 * `nds:gw:e` for drops of everything), the gateway reads the epoch before it asks the database whether the
 * dataset is public, and a fill is written by a script that writes only while the epoch is unchanged. Either
 * the fill's write comes before the drop's count, and the drop's delete (after the count) removes it; or after,
 * and the script refuses it. A fill whose epoch could not be read is kept in this process only.
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
/** An epoch outlives every entry, and every visibility answer that carries it (60 s). */
const EPOCH_TTL_MS = 2 * MAX_TTL_MS;

/**
 * Writes a fill (KEYS: the object, the dataset's key set, the global and the dataset's epoch; ARGV: the value,
 * its TTL, the epoch read before the fill, the object's key as a set member, the set's TTL) unless a drop
 * counted an epoch up since. Answers 1 when written, 0 when refused.
 */
const FILL_SCRIPT = `
local epoch = (redis.call('GET', KEYS[3]) or '0') .. '.' .. (redis.call('GET', KEYS[4]) or '0')
if epoch ~= ARGV[3] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
`;

type FillCommand = (object: string, set: string, globalEpoch: string, datasetEpoch: string, value: Buffer, ttlMs: number, epoch: string, member: string, setTtlMs: number) => Promise<number>;

export class RedisCache implements GatewayCache {
  readonly #local: MemoryCache;
  readonly #redis: Redis;
  readonly #sub: Redis;
  readonly #prefix: string;
  readonly #channel: string;
  readonly #id = Math.random().toString(36).slice(2);
  readonly #log: Logger;
  readonly #listeners: Array<(datasetId: string | undefined) => void> = [];
  readonly #breaker: CircuitBreaker;
  readonly #ready: Promise<void>;
  /** Redis answered once: from then on a connection that is not ready is an outage, not the start. */
  #connected = false;
  /** An outage is under way (and was logged). */
  #down = false;
  #closing = false;
  /** Drops this instance could not make in Redis nor announce; made when Redis is back. */
  #pendingDrops: CacheDrop[] = [];
  /** Drops applied to the in-process tier, made or heard: a read of Redis that raced one keeps nothing. */
  #localDrops = 0;

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
    this.#redis.defineCommand('ndsFill', { numberOfKeys: 4, lua: FILL_SCRIPT });
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
          if (subscribedBefore) this.#heard({ from: '', everything: true });
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
    const drops = this.#localDrops;
    try {
      const [[, value], [, pttl]] = (await this.#redis.multi().getBuffer(this.#objectKey(key)).pttl(this.#objectKey(key)).exec()) as [
        [unknown, Buffer | null],
        [unknown, number],
      ];
      this.#succeeded();
      if (!value || pttl <= 0) return undefined;
      const entry = decodeEntry(value);
      if (!entry) return undefined;
      // A drop heard while Redis answered may have deleted this value since: serve it this once, keep it not.
      const datasetId = datasetOfKey(key);
      if (drops === this.#localDrops && datasetId !== undefined) this.#local.setLocal(datasetId, key, entry, pttl);
      return entry;
    } catch (err) {
      this.#failed(err);
      return undefined;
    }
  }

  async fillEpoch(datasetId: string): Promise<string | undefined> {
    if (!this.#usable()) return undefined;
    try {
      const [global, dataset] = await this.#redis.mget(this.#epochKey(), this.#epochKey(datasetId));
      this.#succeeded();
      return `${global ?? '0'}.${dataset ?? '0'}`;
    } catch (err) {
      this.#failed(err);
      return undefined;
    }
  }

  async set(datasetId: string, key: string, entry: CacheEntry, ttlMs: number, epoch?: string): Promise<boolean> {
    const drops = this.#localDrops;
    let shared = true;
    if (epoch === undefined) shared = !this.#usable();
    else if (this.#usable()) {
      const fill = (this.#redis as unknown as { ndsFill: FillCommand }).ndsFill;
      try {
        const written = await fill.call(
          this.#redis,
          this.#objectKey(key),
          this.#datasetKey(datasetId),
          this.#epochKey(),
          this.#epochKey(datasetId),
          encodeEntry(entry),
          Math.max(1, Math.round(ttlMs)),
          epoch,
          key,
          MAX_TTL_MS,
        );
        this.#succeeded();
        if (written !== 1) return false;
      } catch (err) {
        // Redis away: the entry is kept in this process only, as every read is meanwhile.
        this.#failed(err);
      }
    }
    if (drops === this.#localDrops) this.#local.setLocal(datasetId, key, entry, ttlMs);
    return shared;
  }

  async dropDataset(datasetId: string): Promise<void> {
    this.#localDrops++;
    this.#local.dropDatasetLocal(datasetId);
    await this.#share({ from: this.#id, dataset: datasetId });
  }

  async dropKeys(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    this.#localDrops++;
    this.#local.dropKeysLocal(keys);
    await this.#share({ from: this.#id, keys });
  }

  async dropPrefixes(prefixes: string[]): Promise<void> {
    if (prefixes.length === 0) return;
    this.#localDrops++;
    this.#local.dropPrefixesLocal(prefixes);
    await this.#share({ from: this.#id, prefixes });
  }

  /** Every key of this cache (objects and dataset sets) goes; other users of the Redis database are untouched. */
  async dropAll(): Promise<void> {
    this.#localDrops++;
    this.#local.dropAllLocal();
    await this.#share({ from: this.#id, everything: true });
  }

  onDropHeard(listener: (datasetId: string | undefined) => void): void {
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

  /** Counts the epochs of what the drop touches up, then deletes it (in that order: see the file's comment). */
  async #dropInRedis(drop: CacheDrop): Promise<void> {
    const epochs = new Set<string>();
    if (drop.everything) epochs.add(this.#epochKey());
    if (drop.dataset !== undefined) epochs.add(this.#epochKey(drop.dataset));
    for (const key of [...(drop.keys ?? []), ...(drop.prefixes ?? [])]) {
      const datasetId = datasetOfKey(key);
      epochs.add(datasetId === undefined ? this.#epochKey() : this.#epochKey(datasetId));
    }
    const count = this.#redis.multi();
    for (const epoch of epochs) count.incr(epoch).pexpire(epoch, EPOCH_TTL_MS);
    await count.exec();
    if (drop.everything) {
      // The epochs stay: counted back to nothing, they would let an old fill through.
      await this.#deleteMatching(`${globEscape(this.#prefix)}[od]:*`);
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
    this.#heard(message);
  }

  /** Applies a drop another instance made (or one that may have been missed) here, and tells the listeners. */
  #heard(message: unknown): void {
    this.#localDrops++;
    const dataset = applyDrop(this.#local, message);
    if (dataset !== false) for (const listener of this.#listeners) listener(dataset);
  }

  #objectKey(key: string): string {
    return `${this.#prefix}o:${key}`;
  }

  #datasetKey(datasetId: string): string {
    return `${this.#prefix}d:${datasetId}`;
  }

  /** A dataset's drop epoch, or without one the epoch of drops of everything. */
  #epochKey(datasetId?: string): string {
    return datasetId === undefined ? `${this.#prefix}e` : `${this.#prefix}e:${datasetId}`;
  }
}

/** A literal for a Redis glob pattern (`*`, `?`, `[`, `]` and `\\` escaped). */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/** The dataset of an object key or key prefix (`<id>/zarr/...`); undefined when it names none whole. */
function datasetOfKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  return slash > 0 ? key.slice(0, slash) : undefined;
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
