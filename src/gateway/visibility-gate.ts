/**
 * Which datasets the gateway may serve: only `public` ones (docs/gateway.md). The answer for a dataset is
 * remembered for at most 60 s and forgotten at once when its visibility changes or it is deleted.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import { datasetVisibility } from '../datasets/dataset-queries.js';

const TTL_MS = 60_000;
const MAX_REMEMBERED = 10_000;

export class VisibilityGate {
  readonly #db: Kysely<Database>;
  readonly #now: () => number;
  readonly #answers = new Map<string, { isPublic: boolean; until: number }>();
  /** One query per dataset at a time, however many misses arrive together. */
  readonly #pending = new Map<string, Promise<boolean>>();
  #generation = 0;

  constructor(db: Kysely<Database>, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  async isPublic(datasetId: string): Promise<boolean> {
    const known = this.#answers.get(datasetId);
    if (known && known.until > this.#now()) return known.isPublic;
    const inFlight = this.#pending.get(datasetId);
    if (inFlight) return inFlight;
    const generation = this.#generation;
    const query = datasetVisibility(this.#db, datasetId)
      .then((visibility) => {
        const isPublic = visibility === 'public';
        // A `forget` while the query ran means its answer may already be stale: use it once, keep it not.
        if (generation === this.#generation) {
          if (this.#answers.size >= MAX_REMEMBERED) this.#answers.clear();
          this.#answers.set(datasetId, { isPublic, until: this.#now() + TTL_MS });
        }
        return isPublic;
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
