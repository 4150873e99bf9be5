/**
 * What one clone or fetch may cost the server (decision 0059). Anyone may clone a public dataset's repository,
 * and git's `pack-objects`, which `upload-pack` runs for every clone and fetch, takes by default a thread a core,
 * memory without bound for its delta search, and as long as it likes. So each git process of a read runs under
 * memory and CPU-time limits (`prlimit`, as a push's do, decision 0054), with settings that bound pack-objects'
 * threads and memory, and a transfer that stalls, or takes too long in all, is ended. A worker's own fetch of a
 * dataset's repository runs under the same limits and pack settings.
 */
import type { Config } from '../core/config.js';
import type { ProcessLimits } from './spawn-git.js';

const MIB = 1024 ** 2;

export interface FetchBounds {
  /** Limits of each git process of the read (http-backend, upload-pack, pack-objects). */
  process: ProcessLimits;
  /** How long no byte may move either way (the request's body in, the answer out) before git is ended, in ms. */
  stallMs: number;
  /** How long one request may take in all before git is ended, in ms. */
  maxMs: number;
}

/** The bounds of a clone or fetch under `config`. */
export function fetchBounds(config: Pick<Config, 'gitFetchMemoryBytes' | 'gitFetchCpuS' | 'gitFetchStallS' | 'gitFetchMaxS'>): FetchBounds {
  return {
    process: fetchProcessLimits(config),
    stallMs: config.gitFetchStallS * 1000,
    maxMs: config.gitFetchMaxS * 1000,
  };
}

/** The limits of each git process of a clone or fetch, served or a worker's own. */
export function fetchProcessLimits(config: Pick<Config, 'gitFetchMemoryBytes' | 'gitFetchCpuS'>): ProcessLimits {
  return { dataBytes: config.gitFetchMemoryBytes, cpuSeconds: config.gitFetchCpuS };
}

/**
 * Settings (as `git -c`) that bound the packing of objects, which a worker's fetch (index-pack, and the
 * `gc --auto` after it) reads too:
 * - one thread: a clone takes one core, however many the machine has (git's default is a thread a core, and the
 *   delta search's memory is per thread); how many run at once is bounded by GIT_FETCHES_MAX instead;
 * - the delta search window holds at most 64 MiB (`pack.windowMemory`; git's default: no bound) and the deltas
 *   kept for writing 64 MiB (`pack.deltaCacheSize`; git's default 256 MiB);
 * - a blob over 16 MiB is never delta-searched nor held whole, but streamed (`core.bigFileThreshold`; git's
 *   default 512 MiB): two blobs of 500 MiB compared cost a gigabyte and minutes of CPU.
 */
export const PACK_BOUND_SETTINGS: Readonly<Record<string, string>> = {
  'pack.threads': '1',
  'pack.windowMemory': String(64 * MIB),
  'pack.deltaCacheSize': String(64 * MIB),
  'core.bigFileThreshold': String(16 * MIB),
};

/**
 * The settings of a served clone or fetch: the pack bounds above, and
 * - a keep-alive packet every 5 s while pack-objects has nothing to send yet (`uploadpack.keepAlive`, git's
 *   default, set here because the stall bound relies on it: a clone whose objects take minutes to count is
 *   no stalled one);
 * - partial clones, with the filters GitHub serves: `blob:none`, `blob:limit=<n>` and `tree:0`
 *   (`git clone --filter=blob:none` fetches the history without the files' content, and each file's content
 *   when it is checked out). Other filters (`tree:<depth>`, `sparse:oid`) cost the server a walk of every tree
 *   and are refused. A partial clone asks for the content it lacks by object id: any object reachable from a
 *   branch or tag is served (`uploadpack.allowReachableSHA1InWant`), never one no ref reaches any more (a file
 *   whose commits were force-pushed away).
 */
export const UPLOAD_PACK_SETTINGS: Readonly<Record<string, string>> = {
  ...PACK_BOUND_SETTINGS,
  'uploadpack.keepAlive': '5',
  'uploadpack.allowFilter': 'true',
  'uploadpack.allowReachableSHA1InWant': 'true',
  'uploadpackfilter.allow': 'false',
  'uploadpackfilter.blob:none.allow': 'true',
  'uploadpackfilter.blob:limit.allow': 'true',
  'uploadpackfilter.tree.allow': 'true',
  'uploadpackfilter.tree.maxDepth': '0',
};
