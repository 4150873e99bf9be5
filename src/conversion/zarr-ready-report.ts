/**
 * How a conversion job reports its progress and outcome: through the zarr-ready callback over HTTP, as an
 * external runner (GitHub Actions) does, when a webhook token is configured; recorded directly otherwise,
 * or when the callback cannot be delivered.
 */
import type { Deps } from '../deps.js';
import { recordZarrReady, type ZarrReadyPayload } from './zarr-ready.js';

export async function reportZarrReady(deps: Deps, payload: ZarrReadyPayload): Promise<void> {
  const { config, log } = deps;
  if (config.serviceWebhookToken) {
    const res = await fetch(`${config.publicUrl}/webhooks/zarr-ready`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-token': config.serviceWebhookToken },
      body: JSON.stringify(payload),
    }).catch((err: unknown) => {
      log.warn({ err, dataset: payload.dataset_id }, 'zarr-ready callback could not be sent; recording directly');
      return undefined;
    });
    if (res?.ok) return;
    if (res) log.warn({ status: res.status, dataset: payload.dataset_id }, 'zarr-ready callback refused; recording directly');
  }
  await recordZarrReady(deps, payload);
}
