/**
 * Keeps the Zarr copy in step with versions: a dataset without a git repository has its versions as its
 * only source, so each new version dispatches a conversion from its manifest (the job reads the latest
 * version's manifest; see conversion/source-checkout.ts). A dataset with a repository is
 * converted on pushes instead.
 */
import { dispatchConversion } from './dispatch.js';
import type { Deps } from '../deps.js';

/** Best effort: the version is made whatever happens here; a failed dispatch is logged, and `regenerate` redoes it. */
export async function convertNewVersion(deps: Deps, dataset: { id: string; source_repo: string | null }, version: string): Promise<void> {
  if (dataset.source_repo) return;
  try {
    await dispatchConversion(deps, { datasetId: dataset.id, ref: version, full: false, reason: 'version' });
  } catch (err) {
    deps.log.warn({ err, dataset: dataset.id, version }, 'conversion of a new version could not be dispatched');
  }
}
