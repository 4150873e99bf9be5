import type { Kysely } from 'kysely';
import type { Clock } from './core/clock.js';
import type { Config } from './core/config.js';
import type { Database } from './db/types.js';
import type { KeyCache } from './accounts/key-cache.js';
import type { Logger } from './core/log.js';
import type { Mailer } from './mail/mailer.js';
import type { ObjectStore } from './objects/object-store.js';

/**
 * What services, routes and jobs receive: plain dependencies, never a request.
 * Built once by `startServer` (or a test) and passed down.
 */
export interface Deps {
  config: Config;
  db: Kysely<Database>;
  dbEngine: 'pglite' | 'postgres';
  objects: ObjectStore;
  log: Logger;
  clock: Clock;
  mailer: Mailer;
  /** Recent bearer-key look-ups; emptied by every write to users or api_keys through `db`. */
  keyCache: KeyCache;
  /** Hooks other domains register at start-up (cache purge on visibility change, conversion dispatch...). */
  hooks: Hooks;
}

export interface Hooks {
  /** Called after a dataset's visibility changed or it was deleted; the gateway drops its cached objects. */
  datasetGone: Array<(datasetId: string) => Promise<void> | void>;
  /**
   * Called after a conversion changed a dataset's Zarr copy, with the object keys (relative to
   * `<id>/zarr/`) whose cached copies are stale: `index.json` and each changed store's `zarr.json`.
   */
  zarrChanged: Array<(datasetId: string, paths: string[]) => Promise<void> | void>;
  /** Called after a conversion job was queued, so an in-process worker can start at once. */
  jobQueued: Array<() => void>;
}

export function emptyHooks(): Hooks {
  return { datasetGone: [], zarrChanged: [], jobQueued: [] };
}
