/**
 * A verified GitHub delivery, taken once: a replay answers `duplicate_delivery`; otherwise the push rule
 * decides over the payload and a conversion is dispatched for every dataset converting from the repository
 * it names (or, when none does, for the one naming it among its external ids).
 */
import type { Deps } from '../deps.js';
import { findDatasetsByRepository } from '../datasets/dataset-queries.js';
import { dispatchConversion } from './dispatch.js';
import { claimDelivery, releaseDelivery, type DeliveryKey } from './github-deliveries.js';
import { decidePush, repositoryKeys, type PushPayload } from './push-rule.js';

export interface GithubDelivery extends DeliveryKey {
  /** `X-GitHub-Event`. */
  event: string | undefined;
  /** The payload, read lazily: a ping needs none. */
  payload: () => PushPayload;
}

/**
 * `datasets`: how many datasets convert from the pushed repository; `dataset_ids`: the public ones among them
 * (`dataset_id` the first). GitHub keeps the answer in the webhook's "Recent Deliveries", which the repository's
 * administrators read whether or not they may read a dataset: a private one is counted, never named.
 */
export type DeliveryAnswer = { dispatched: true; reason: string; datasets: number; dataset_id?: string; dataset_ids: string[] } | { dispatched: false; reason: string };

/** Takes a delivery whose signature was checked; a failure forgets it, so that GitHub may deliver it again. */
export async function takeGithubDelivery(deps: Deps, delivery: GithubDelivery): Promise<DeliveryAnswer> {
  const { db } = deps;
  if (!(await claimDelivery(db, delivery, deps.clock.now()))) {
    deps.log.info({ delivery: delivery.deliveryId, event: delivery.event }, 'GitHub delivery replayed: nothing dispatched');
    return { dispatched: false, reason: 'duplicate_delivery' };
  }
  try {
    if (delivery.event === 'ping') return { dispatched: false, reason: 'ping' };
    const payload = delivery.payload();
    const datasets = delivery.event === 'push' ? await findDatasetsByRepository(db, repositoryKeys(payload.repository)) : [];
    const decision = decidePush(delivery.event, payload, datasets.length > 0);
    if (!decision.dispatched || datasets.length === 0) return { dispatched: false, reason: decision.reason };
    for (const dataset of datasets) await dispatchConversion(deps, { datasetId: dataset.id, ref: payload.after ?? 'main', full: false, reason: 'push' });
    deps.log.info({ delivery: delivery.deliveryId, datasets: datasets.map((d) => d.id) }, 'GitHub push dispatched conversions');
    const named = datasets.filter((d) => d.visibility === 'public').map((d) => d.id);
    return { dispatched: true, reason: decision.reason, datasets: datasets.length, ...(named.length > 0 && { dataset_id: named[0] }), dataset_ids: named };
  } catch (err) {
    await releaseDelivery(db, delivery);
    throw err;
  }
}
