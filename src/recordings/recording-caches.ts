/**
 * The read side's caches of one process (docs/architecture.md, "The read side"): made once by `lifecycle.ts`,
 * carried on the server's deps, timed by the process's clock. Two servers in one process (tests, benchmarks)
 * never share one.
 */
import type { Deps } from '../deps.js';
import { DecodedChunks } from './decoded-chunks.js';
import { StoreLookups } from './store-lookups.js';
import { StoreMetadataCache } from './store-metadata-cache.js';

export interface RecordingCaches {
  /** Which store a caller may read at a path, for `LOOKUP_TTL_MS` by the clock. */
  storeLookups: StoreLookups;
  /** Each store's metadata, checked against its root's entity tag at every use. */
  storeMetadata: StoreMetadataCache;
  /** Decoded level-0 chunks, at most `DECODED_CHUNK_BYTES`. */
  decodedChunks: DecodedChunks;
}

/** What the read side's services take: the deps every service takes, and the caches. */
export type RecordingReadDeps = Pick<Deps, 'db' | 'objects'> & { recordingCaches: RecordingCaches };

export function createRecordingCaches(deps: Pick<Deps, 'objects' | 'clock'>): RecordingCaches {
  return {
    storeLookups: new StoreLookups(deps.clock),
    storeMetadata: new StoreMetadataCache(deps.objects),
    decodedChunks: new DecodedChunks(),
  };
}
