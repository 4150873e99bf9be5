/**
 * The cache of one worker of `nds gateway` on several processes without Redis: a `MemoryCache` whose drops
 * are announced to the sibling workers (through the cluster's primary) and whose siblings' drops are
 * applied here, so a purge received by one worker empties every worker's copy.
 */
import { randomUUID } from 'node:crypto';
import { applyDrop, type CacheDrop, type CacheEntry, type GatewayCache } from './gateway-cache.js';
import { MemoryCache } from './memory-cache.js';

/** How drops travel between workers; the cluster's IPC channel in production, a stand-in in tests. */
export interface DropChannel {
  /** Announces a drop to every other worker. */
  send(message: CacheDrop): void;
  /** Calls `listener` with each drop another worker announced. */
  onMessage(listener: (message: unknown) => void): void;
}

export class RelayedCache implements GatewayCache {
  readonly #local: MemoryCache;
  readonly #channel: DropChannel;
  readonly #id = randomUUID();
  readonly #listeners: Array<(datasetId: string | undefined) => void> = [];

  get bytes(): number {
    return this.#local.bytes;
  }

  /** Drops are relayed over IPC; there is no shared tier to fail. */
  get sharedCircuit(): undefined {
    return undefined;
  }

  constructor(maxBytes: number, channel: DropChannel, now?: () => number) {
    this.#local = new MemoryCache(maxBytes, now);
    this.#channel = channel;
    channel.onMessage((message) => {
      if ((message as Partial<CacheDrop> | null)?.from === this.#id) return;
      const dataset = applyDrop(this.#local, message);
      if (dataset !== false) for (const listener of this.#listeners) listener(dataset);
    });
  }

  getLocal(key: string): CacheEntry | undefined {
    return this.#local.getLocal(key);
  }

  async getShared(): Promise<CacheEntry | undefined> {
    return undefined;
  }

  /** No shared tier: a sibling's drop reaches this process as a message (`onDropHeard`), not as an epoch. */
  async fillEpoch(): Promise<undefined> {
    return undefined;
  }

  async set(datasetId: string, key: string, entry: CacheEntry, ttlMs: number): Promise<boolean> {
    this.#local.setLocal(datasetId, key, entry, ttlMs);
    return true;
  }

  async dropDataset(datasetId: string): Promise<void> {
    this.#local.dropDatasetLocal(datasetId);
    this.#channel.send({ from: this.#id, dataset: datasetId });
  }

  async dropKeys(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    this.#local.dropKeysLocal(keys);
    this.#channel.send({ from: this.#id, keys });
  }

  async dropPrefixes(prefixes: string[]): Promise<void> {
    if (prefixes.length === 0) return;
    this.#local.dropPrefixesLocal(prefixes);
    this.#channel.send({ from: this.#id, prefixes });
  }

  async dropAll(): Promise<void> {
    this.#local.dropAllLocal();
    this.#channel.send({ from: this.#id, everything: true });
  }

  onDropHeard(listener: (datasetId: string | undefined) => void): void {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    await this.#local.close();
  }
}
