/**
 * A verified GitHub delivery, taken once: a replay answers `duplicate_delivery`; otherwise the push rule
 * decides over the payload and a conversion is dispatched for the dataset whose repository it names.
 */
import type { Deps } from '../deps.js';
import { findDatasetByRepository } from '../datasets/dataset-queries.js';
import { dispatchConversion } from './dispatch.js';
import { claimDelivery, releaseDelivery, type DeliveryKey } from './github-deliveries.js';
import { decidePush, repositoryKeys, type PushPayload } from './push-rule.js';

export interface GithubDelivery extends DeliveryKey {
  /** `X-GitHub-Event`. */
  event: string | undefined;
  /** The payload, read lazily: a ping needs none. */
  payload: () => PushPayload;
}

export type DeliveryAnswer = { dispatched: true; reason: string; dataset_id: string } | { dispatched: false; reason: string };

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
    const dataset = delivery.event === 'push' ? await findDatasetByRepository(db, repositoryKeys(payload.repository)) : undefined;
    const decision = decidePush(delivery.event, payload, dataset !== undefined);
    if (!decision.dispatched || !dataset) return { dispatched: false, reason: decision.reason };
    await dispatchConversion(deps, { datasetId: dataset.id, ref: payload.after ?? 'main', full: false, reason: 'push' });
    return { dispatched: true, reason: decision.reason, dataset_id: dataset.id };
  } catch (err) {
    await releaseDelivery(db, delivery);
    throw err;
  }
}
