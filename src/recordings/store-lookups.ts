/**
 * Which store a caller may read at a path, remembered for a short while by the process's clock: the look-up
 * (visibility included) was half the cost of a small window in embedded PGlite. A dataset made private,
 * deleted or converted anew through this process is looked up again at once (`forgetDataset`, on the hooks
 * `lifecycle.ts` registers); through another process, at most `ttlMs` after the change. A refusal is never
 * remembered.
 */
import type { Clock } from '../core/clock.js';
import type { StoreMetadata } from './store-metadata.js';

/** How long a found store is served without asking the catalogue again. */
export const LOOKUP_TTL_MS = 2000;
/** Most look-ups remembered; past it, the expired and then the oldest are dropped. */
export const MAX_LOOKUPS = 1024;

export interface StoreLookupsOptions {
  /** How long a look-up is remembered; default `LOOKUP_TTL_MS`. */
  ttlMs?: number;
  /** Most look-ups remembered; default `MAX_LOOKUPS`. */
  maxEntries?: number;
}

export class StoreLookups {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, { datasetId: string; store: StoreMetadata; until: number }>();
  /** Moved by every `forgetDataset`: a look-up that overlapped one is used once and not remembered. */
  #generation = 0;

  constructor(clock: Clock, options: StoreLookupsOptions = {}) {
    this.#clock = clock;
    this.#ttlMs = options.ttlMs ?? LOOKUP_TTL_MS;
    this.#maxEntries = options.maxEntries ?? MAX_LOOKUPS;
  }

  /**
   * The store at `path` of `datasetId` for the reader `readerKey` names (an account, nobody, or a read grant):
   * the remembered one while it is fresh, else what `lookUp` finds (remembered when it finds one).
   */
  async find(readerKey: string, datasetId: string, path: string, lookUp: () => Promise<StoreMetadata | undefined>): Promise<StoreMetadata | undefined> {
    const key = `${readerKey}\0${datasetId}\0${path}`;
    const now = this.#clock.now().getTime();
    const hit = this.#entries.get(key);
    if (hit && hit.until > now) return hit.store;
    const generation = this.#generation;
    const store = await lookUp();
    this.#entries.delete(key);
    if (store && generation === this.#generation) {
      if (this.#entries.size >= this.#maxEntries) {
        for (const [k, v] of this.#entries) if (v.until <= now || this.#entries.size >= this.#maxEntries) this.#entries.delete(k);
      }
      this.#entries.set(key, { datasetId, store, until: now + this.#ttlMs });
    }
    return store;
  }

  /** Forgets every look-up in `datasetId`: its visibility changed, it was deleted, or its copy was rewritten. */
  forgetDataset(datasetId: string): void {
    this.#generation++;
    for (const [key, entry] of this.#entries) if (entry.datasetId === datasetId) this.#entries.delete(key);
  }

  /** How many look-ups are remembered (fresh or not yet dropped). */
  get size(): number {
    return this.#entries.size;
  }
}
