/**
 * Which datasets may be served to anyone: only `public` ones (docs/gateway.md). The answer for a dataset is
 * remembered for at most `ttlMs` (the gateway's 60 s by default; `/objects/`, the origin, 1 s) and forgotten at
 * once in this process when its visibility changes or it is deleted.
 *
 * With `epochOf` (the gateway's shared cache), an answer carries the cache's epoch of the dataset, read before
 * the database was asked: a fill of the cache is kept only while no drop came since (redis-cache.ts).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { datasetVisibility } from '../datasets/dataset-queries.js';

/** The gateway's memory of an answer: its caches and the CDN's keep data of this age anyway. */
export const GATEWAY_VISIBILITY_TTL_MS = 60_000;
const MAX_REMEMBERED = 10_000;

/** Whether a dataset may be served to anyone, and the shared cache's epoch of it when the answer was taken. */
export interface Admission {
  isPublic: boolean;
  epoch: string | undefined;
}

export class VisibilityGate {
  readonly #db: Kysely<Database>;
  readonly #now: () => number;
  readonly #ttlMs: number;
  readonly #epochOf: (datasetId: string) => Promise<string | undefined>;
  readonly #answers = new Map<string, Admission & { until: number }>();
  /** One query per dataset at a time, however many misses arrive together. */
  readonly #pending = new Map<string, Promise<Admission>>();
  #generation = 0;

  constructor(db: Kysely<Database>, now: () => number = Date.now, ttlMs = GATEWAY_VISIBILITY_TTL_MS, epochOf: (datasetId: string) => Promise<string | undefined> = async () => undefined) {
    this.#db = db;
    this.#now = now;
    this.#ttlMs = ttlMs;
    this.#epochOf = epochOf;
  }

  async isPublic(datasetId: string): Promise<boolean> {
    return (await this.admit(datasetId)).isPublic;
  }

  async admit(datasetId: string): Promise<Admission> {
    const known = this.#answers.get(datasetId);
    if (known && known.until > this.#now()) return known;
    const inFlight = this.#pending.get(datasetId);
    if (inFlight) return inFlight;
    const generation = this.#generation;
    const query = this.#epochOf(datasetId)
      .then(async (epoch) => ({ isPublic: (await datasetVisibility(this.#db, datasetId)) === 'public', epoch }))
      .then((admission) => {
        // A `forget` while the query ran means its answer may already be stale: use it once, keep it not.
        if (generation === this.#generation) {
          if (this.#answers.size >= MAX_REMEMBERED) this.#answers.clear();
          this.#answers.set(datasetId, { ...admission, until: this.#now() + this.#ttlMs });
        }
        return admission;
      })
      .finally(() => this.#pending.delete(datasetId));
    this.#pending.set(datasetId, query);
    return query;
  }

  forget(datasetId: string): void {
    this.#generation++;
    this.#answers.delete(datasetId);
    this.#pending.delete(datasetId);
  }
}
