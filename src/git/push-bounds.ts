/**
 * What one push may cost the server besides the pack it sends (decision 0054). `receive.maxInputSize` bounds
 * a pack's bytes, not what they inflate to: zlib packs zeros about a thousand to one, and a delta's copy
 * instructions may repeat its base without end (four bytes copy 16 MiB). git's index-pack inflates and hashes
 * every object of a push, and builds each delta's result whole in memory, before anything can look at the
 * objects. So each git process of a push runs under a memory and a CPU-time limit (a bomb fails there), and
 * the objects it brought are checked before any ref moves (`receive-checks.ts`).
 */
import type { Config } from '../core/config.js';
import { receiveCheckSettings, type ReceiveCheckBounds } from './receive-checks.js';
import type { ProcessLimits } from './spawn-git.js';

export interface PushBounds extends ReceiveCheckBounds {
  /** Limits of each git process of the push. */
  process: ProcessLimits;
}

/**
 * How many times the most a push may send (MAX_GIT_PUSH_BYTES) its objects may hold, inflated: text deflates
 * three to ten to one; a pack that inflates more is all but certainly built to.
 */
const CONTENT_PER_PACK_BYTE = 4;
/** What index-pack holds besides the objects it builds: its table of the objects, buffers, threads' stacks. */
const BASE_MEMORY_BYTES = 512 * 1024 ** 2;
/**
 * How many of the largest blobs index-pack may hold at once: up to three threads (git's default) each build a
 * delta's result from its base, and each keeps up to core.deltaBaseCacheLimit of bases besides.
 */
const LARGEST_BLOBS_HELD = 6;
/** CPU seconds of any push, however small (git's start, a tree of a million entries checked). */
const BASE_CPU_SECONDS = 30;
/**
 * How much content index-pack inflates and hashes in a second of CPU, at the least: about half what it did here
 * (300 MB/s for blobs of random bytes and their deltas, 430 MB/s for zeros).
 */
const CONTENT_BYTES_PER_CPU_SECOND = 200 * 1024 ** 2;

/** The bounds of a push under `config`. */
export function pushBounds(config: Pick<Config, 'maxGitFileBytes' | 'maxGitPushBytes'>): PushBounds {
  const maxObjectBytes = config.maxGitFileBytes;
  // At least one file of the largest size a push may bring, whatever MAX_GIT_PUSH_BYTES.
  const maxContentBytes = Math.max(CONTENT_PER_PACK_BYTE * config.maxGitPushBytes, maxObjectBytes);
  return {
    maxObjectBytes,
    maxContentBytes,
    process: {
      dataBytes: BASE_MEMORY_BYTES + LARGEST_BLOBS_HELD * maxObjectBytes,
      cpuSeconds: BASE_CPU_SECONDS + Math.ceil(maxContentBytes / CONTENT_BYTES_PER_CPU_SECOND),
    },
  };
}

/** The settings (as `git -c`) of a push's git that bound it, besides `receive.maxInputSize`. */
export function pushBoundSettings(bounds: PushBounds): Record<string, string> {
  return {
    // A blob larger than this is inflated and hashed as it streams in, never held whole: one larger than a push
    // may bring costs its CPU time only, and the hook then refuses it.
    'core.bigFileThreshold': String(bounds.maxObjectBytes),
    ...receiveCheckSettings(bounds),
  };
}
