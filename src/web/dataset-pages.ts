/**
 * The dataset pages (`/datasets`, `/datasets/:id`) and the viewer's script. The paths are shared with the
 * JSON API: `datasetPagesNegotiation` (mounted in app.ts before the API) answers with HTML only when the
 * client ranks HTML above JSON, and passes everything else on.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { Hono } from 'hono';
import { DATASET_ID } from '../datasets/dataset-access.js';
import type { AppEnv } from '../http/app-env.js';
import { authenticate } from '../http/auth.js';
import { prefersHtml } from '../http/accept-preference.js';
import { findPageDataset, listPageDatasets, readStoreMetadata, readZarrIndex, type StoreMetadata } from './dataset-page-data.js';
import { datasetDetailBody, datasetListBody, viewerStyle } from './dataset-page-views.js';
import { html, page } from './html.js';
import { viewerBundleRoutes, viewerPreloads } from './viewer-bundle.js';

const pagePath = /^\/datasets(?:\/([^/]+))?\/?$/;

export function datasetPagesNegotiation(): MiddlewareHandler<AppEnv> {
  const optionalCaller = authenticate('optional');
  return async function datasetPagesNegotiation(c, next) {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next();
    const match = pagePath.exec(c.req.path);
    if (!match || (match[1] !== undefined && !DATASET_ID.test(match[1])) || !prefersHtml(c.req.header('accept'))) return next();
    let response: Response | undefined;
    await optionalCaller(c, async () => {
      response = match[1] === undefined ? await listPage(c) : await detailPage(c, match[1]);
    });
    return response!;
  };
}

async function listPage(c: Context<AppEnv>): Promise<Response> {
  const user = c.var.caller?.user;
  const datasets = await listPageDatasets(c.var.deps.db, user);
  return c.html(page({ title: 'Datasets', username: user?.username, body: datasetListBody(datasets), head: viewerStyle }));
}

async function detailPage(c: Context<AppEnv>, id: string): Promise<Response> {
  const { db, objects, config } = c.var.deps;
  const user = c.var.caller?.user;
  const dataset = await findPageDataset(db, id, user);
  if (!dataset) {
    return c.html(page({ title: 'Not found', username: user?.username, body: html`<h1>Not found</h1><p>No dataset ${id}.</p><p><a href="/datasets">All datasets</a></p>` }), 404);
  }
  const index = await readZarrIndex(objects, id);
  const wanted = c.req.query('recording');
  const selected = index?.stores.find((s) => s.zarr === wanted) ?? index?.stores[0];
  const group = selected && (selected.groups.find((g) => g.name === c.req.query('group')) ?? selected.groups[0])?.name;
  let head = viewerStyle;
  let metadata: StoreMetadata | undefined;
  if (selected && group && dataset.visibility === 'public') {
    metadata = await readStoreMetadata(objects, id, selected.zarr, group);
    const preloads = await viewerPreloads(metadata ? storeCodecs(metadata) : []);
    head = html`${viewerStyle}${preloads.map((href) => html`<link rel="modulepreload" href="${href}">`)}`;
  }
  const body = datasetDetailBody({ dataset, index, selected, group, metadata, zarrBase: `${config.zarrCacheBaseUrl}/${id}/zarr` });
  return c.html(page({ title: dataset.name, username: user?.username, body, head }));
}

/** Names of the codecs the store's arrays use (the bundle splits the heavy ones into their own files). */
function storeCodecs(metadata: StoreMetadata): string[] {
  const names = new Set<string>();
  for (const doc of Object.values(metadata)) {
    for (const codec of ((doc as { codecs?: Array<{ name?: unknown }> }).codecs ?? [])) if (typeof codec.name === 'string') names.add(codec.name);
  }
  return [...names];
}

/**
 * The viewer's bundled script, and the pages again for requests the API router passed on to them (it
 * hands over any Accept that mentions HTML).
 */
export function datasetPages(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.route('/', viewerBundleRoutes());
  app.get('/datasets', authenticate('optional'), (c) => listPage(c));
  app.get('/datasets/:id{(?:nd|sb)\\d{6}}', authenticate('optional'), (c) => detailPage(c, c.req.param('id')));
  return app;
}
