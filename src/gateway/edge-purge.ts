/**
 * The purge client of docs/gateway.md: after a conversion, asks the CDN (or an nds gateway speaking the same
 * API) to drop the stale copies of `index.json` and the changed stores' `zarr.json`. Best effort: a failure
 * is logged and the TTLs (60 s for metadata) bound the staleness; it never throws.
 */
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';

/** Cloudflare accepts at most 30 URLs a purge request. */
export const PURGE_BATCH = 30;

export interface EdgePurgeOptions {
  config: Pick<Config, 'edgeApiBase' | 'edgeApiToken' | 'edgeZoneId' | 'zarrCacheBaseUrl'>;
  log: Logger;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

/** Absolute gateway URLs of paths relative to `<id>/zarr/`. */
export function purgeUrls(zarrCacheBaseUrl: string, datasetId: string, paths: string[]): string[] {
  return paths.map((p) => `${zarrCacheBaseUrl}/${datasetId}/zarr/${p.split('/').map(encodeURIComponent).join('/')}`);
}

/** Returns the hook for `deps.hooks.zarrChanged`; it does nothing when EDGE_API_TOKEN or EDGE_ZONE_ID is unset. */
export function edgePurger(options: EdgePurgeOptions): (datasetId: string, paths: string[]) => Promise<void> {
  const { config, log } = options;
  const doFetch = options.fetch ?? fetch;
  return async (datasetId, paths) => {
    if (!config.edgeApiToken || !config.edgeZoneId) {
      log.debug({ dataset: datasetId }, 'edge purge skipped: EDGE_API_TOKEN or EDGE_ZONE_ID unset');
      return;
    }
    const urls = purgeUrls(config.zarrCacheBaseUrl, datasetId, paths);
    const endpoint = `${config.edgeApiBase}/zones/${encodeURIComponent(config.edgeZoneId)}/purge_cache`;
    for (let i = 0; i < urls.length; i += PURGE_BATCH) {
      const files = urls.slice(i, i + PURGE_BATCH);
      try {
        const res = await doFetch(endpoint, {
          method: 'POST',
          headers: { authorization: `Bearer ${config.edgeApiToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ files }),
          signal: AbortSignal.timeout(10_000),
        });
        const answer = (await res.json().catch(() => undefined)) as { success?: boolean } | undefined;
        if (!res.ok || answer?.success !== true) log.warn({ dataset: datasetId, status: res.status, files: files.length }, 'edge purge refused');
        else log.info({ dataset: datasetId, files: files.length }, 'edge purge done');
      } catch (err) {
        log.warn({ dataset: datasetId, err: (err as Error).message }, 'edge purge failed');
      }
    }
  };
}
