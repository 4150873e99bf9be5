/** The recordings of a copy that could not be converted, as `index.json` lists them: one reading, kept small. */
import type { StoreIndex } from '../formats/zarr/store-index.js';

export interface RecordingFailure {
  path: string;
  zarr: string;
  code: string;
  reason: string;
}

export function indexFailures(index: Pick<StoreIndex, 'failures'> | undefined): RecordingFailure[] {
  return (index?.failures ?? []).map((f) => ({ path: String(f.path ?? ''), zarr: String(f.zarr ?? ''), code: String(f.code ?? 'unknown'), reason: String(f.reason ?? '') }));
}
