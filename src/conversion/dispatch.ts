/**
 * Dispatching a conversion: into the database queue (`CONVERSION_DISPATCH=local`) or as a GitHub repository
 * dispatch `generate-zarr` to the conversion repository. Either way the dataset's `zarr_status` becomes `pending`.
 */
import type { Deps } from '../deps.js';
import { NdsError } from '../core/errors.js';
import { setZarrStatus } from '../datasets/dataset-queries.js';
import { enqueueConversion } from './job-queue.js';
import { followsMain } from './conversion-job.js';

export interface DispatchRequest {
  datasetId: string;
  ref: string;
  full: boolean;
  reason: string;
}

export type DispatchResult = { mode: 'local'; job_id: number; coalesced: boolean } | { mode: 'github' };

/**
 * The payload of `generate-zarr` (docs/operating-zarr.md), what an external runner is sent: the commit to
 * convert and, for a push's delivery, `follow_main`: convert where `main` is when the runner starts instead
 * (decision 0049; GitHub promises no order of deliveries).
 */
export function dispatchPayload(deps: Deps, req: DispatchRequest) {
  return {
    dataset_id: req.datasetId,
    ref: req.ref,
    full: req.full,
    reason: req.reason,
    follow_main: followsMain(req),
    callback_url: `${deps.config.publicUrl}/webhooks/zarr-ready`,
  };
}

export async function dispatchConversion(deps: Deps, req: DispatchRequest): Promise<DispatchResult> {
  const { db, config } = deps;
  let result: DispatchResult;
  if (config.conversionDispatch === 'github') {
    const res = await fetch(`${config.githubApiUrl}/repos/${config.githubDispatchRepo}/dispatches`, {
      method: 'POST',
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${config.githubToken}`,
        'content-type': 'application/json',
        'x-github-api-version': '2022-11-28',
        'user-agent': 'nds',
      },
      body: JSON.stringify({ event_type: 'generate-zarr', client_payload: dispatchPayload(deps, req) }),
    }).catch((err: unknown) => {
      throw new NdsError('upstream_failed', { message: 'GitHub could not be reached for the repository dispatch.', cause: err });
    });
    if (res.status !== 204 && !res.ok) {
      throw new NdsError('upstream_failed', { message: `GitHub refused the repository dispatch (HTTP ${res.status}).` });
    }
    result = { mode: 'github' };
  } else {
    const { job, coalesced } = await enqueueConversion(db, req);
    result = { mode: 'local', job_id: job.id, coalesced };
  }
  await setZarrStatus(db, req.datasetId, 'pending', deps.clock.now());
  if (result.mode === 'local') for (const wake of deps.hooks.jobQueued) wake();
  deps.log.info({ dataset: req.datasetId, ref: req.ref, full: req.full, reason: req.reason, mode: result.mode }, 'conversion dispatched');
  return result;
}
