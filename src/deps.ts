import type { Kysely } from 'kysely';
import type { Clock } from './core/clock.js';
import type { Config } from './core/config.js';
import type { Logger } from './core/log.js';
import type { Metrics } from './core/metrics.js';
import type { Database } from './db/types.js';
import type { Mailer } from './mail/mailer.js';
import type { ObjectStore } from './objects/object-store.js';

/**
 * What services, routes and jobs receive: plain dependencies, never a request. Opened by
 * `lifecycle.ts` (or a test) for one process and passed down; the HTTP server adds its own long-lived
 * services on top (`http/app-env.ts`).
 */
export interface Deps {
  config: Config;
  db: Kysely<Database>;
  dbEngine: 'pglite' | 'postgres';
  /** How the database ranks by vector similarity: the pgvector extension, or the SQL function `nds_cosine`. */
  vectorSimilarity: 'pgvector' | 'sql';
  objects: ObjectStore;
  log: Logger;
  /** The process's metrics (`GET /metrics`): observed where the work happens. */
  metrics: Metrics;
  clock: Clock;
  /** Outgoing mail; a process that sends none (gateway, worker) has one that refuses. */
  mailer: Mailer;
  /** Hooks between domains, registered in one place: `lifecycle.ts`. */
  hooks: Hooks;
}

export interface Hooks {
  /**
   * Called after a dataset's visibility changed (either way) or it was deleted: the gateway forgets what
   * it knew of the dataset (its public answer and cached objects).
   */
  datasetVisibilityChanged: Array<(datasetId: string) => Promise<void> | void>;
  /**
   * Called after a conversion changed a dataset's Zarr copy, with the object keys (relative to
   * `<id>/zarr/`) whose cached copies are stale: `index.json` and each changed store's `zarr.json`.
   */
  zarrChanged: Array<(datasetId: string, paths: string[]) => Promise<void> | void>;
  /** Called after a conversion job was queued, so an in-process worker can start at once. */
  jobQueued: Array<() => void>;
  /**
   * Called after a dataset's members changed (one added, removed, or given another role): what this process
   * remembers of who may read it is forgotten, so a member removed reads nothing from that moment.
   */
  datasetMembersChanged: Array<(datasetId: string) => Promise<void> | void>;
}

export function emptyHooks(): Hooks {
  return { datasetVisibilityChanged: [], zarrChanged: [], jobQueued: [], datasetMembersChanged: [] };
}
