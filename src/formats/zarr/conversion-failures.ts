/**
 * What a dataset's owner can act on after a conversion: each recording that could not be converted, with its
 * code and the reason sentence the converter wrote into `index.json` (`failures[]`). Read by the dataset
 * page, the admin Zarr status and (through the API) `nds datasets show`.
 */
import type { Deps } from '../../deps.js';
import { failureCodes, type FailureCode } from '../conversion-errors.js';
import type { StoreIndex } from './store-index.js';
import { readStoreIndex } from './store-index-object.js';

export interface ConversionFailure {
  /** The recording's data file in the BIDS tree. */
  path: string;
  /** Where its store would be, under `<id>/zarr/`. */
  zarr: string;
  code: FailureCode | 'unknown';
  /** A sentence the owner can act on. */
  reason: string;
}

/** What to do about each failure code, when the index gives no reason of its own. */
export const FAILURE_ADVICE: Record<FailureCode | 'unknown', string> = {
  corrupt_or_truncated: 'The file is shorter than its header says or its header is damaged: export it again and upload it.',
  unsupported_format: 'nds does not read this kind or variant of file: convert it to EDF, BDF, BrainVision or EEGLAB.',
  empty_recording: 'The recording holds no samples: check that the data file was uploaded whole.',
  not_continuous: 'Epoched or segmented data cannot be served as a continuous recording: upload the continuous recording.',
  channel_count_mismatch: 'The header and the data (or a sidecar) disagree on the number of channels: fix the sidecar or export again.',
  file_read_error: 'The file could not be read: check that its companion files (.vmrk/.eeg, .fdt) are uploaded beside it.',
  unknown: 'The recording could not be converted.',
};

const KNOWN = new Set<string>(failureCodes);

/**
 * Pure: the failures of an index, as written or from an external runner (odd entries are kept with what
 * they say; an entry without a path is left out).
 */
export function conversionFailuresOf(index: Pick<StoreIndex, 'failures'> | undefined): ConversionFailure[] {
  const out: ConversionFailure[] = [];
  for (const f of (index?.failures ?? []) as unknown as Array<Record<string, unknown> | null>) {
    if (typeof f?.path !== 'string' || f.path === '') continue;
    const code = typeof f.code === 'string' && KNOWN.has(f.code) ? (f.code as FailureCode) : 'unknown';
    const reason = typeof f.reason === 'string' && f.reason.trim() !== '' ? f.reason.trim() : FAILURE_ADVICE[code];
    out.push({ path: f.path, zarr: typeof f.zarr === 'string' ? f.zarr : '', code, reason });
  }
  return out;
}

/**
 * The failures of `datasetId`'s last conversion; `undefined` when it has no Zarr copy yet. A damaged index
 * counts as none (the page and status still answer; the conversion that replaces it reports anew).
 */
export async function readConversionFailures(deps: Pick<Deps, 'objects'>, datasetId: string): Promise<ConversionFailure[] | undefined> {
  let index: StoreIndex | undefined;
  try {
    index = await readStoreIndex(deps.objects, datasetId);
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
  return index && conversionFailuresOf(index);
}
