/** What `nds admin zarr regenerate|status|backfill` asks of the pipeline, through the admin routes. */
import type { ConversionJob } from '../db/conversion-tables.js';
import type { Visibility } from '../db/datasets-tables.js';
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { datasetExists, findZarrState, listZarrStates, type ZarrState } from '../datasets/dataset-queries.js';
import { dispatchConversion, type DispatchResult } from './dispatch.js';
import { latestJobs } from './job-queue.js';

/** Dispatches a conversion of `ref` (all recordings when `full`); `dataset_not_found` for no such dataset. */
export async function regenerateZarr(deps: Deps, id: string, options: { ref: string; full: boolean }): Promise<DispatchResult> {
  if (!(await datasetExists(deps.db, id))) throw new NdsError('dataset_not_found');
  return dispatchConversion(deps, { datasetId: id, ref: options.ref, full: options.full, reason: 'regenerate' });
}

/** The Zarr copy's recorded state and the dataset's latest jobs; `dataset_not_found` for no such dataset. */
export async function zarrStatus(deps: Pick<Deps, 'db'>, id: string): Promise<{ state: ZarrState; jobs: ConversionJob[] }> {
  const state = await findZarrState(deps.db, id);
  if (!state) throw new NdsError('dataset_not_found');
  return { state, jobs: await latestJobs(deps.db, id) };
}

/** The datasets a sweep (backfill) goes through, by id, with their Zarr state. */
export function zarrSweepList(deps: Pick<Deps, 'db'>, visibility: Visibility | 'all') {
  return listZarrStates(deps.db, visibility);
}
