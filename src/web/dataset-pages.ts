/**
 * The dataset pages (`/datasets`, `/datasets/:id`). The paths are shared with the JSON API; `mountRoutes`
 * answers with a page when the browser asks for HTML (`http/accept-preference.ts`).
 */
import { signInOf } from '../accounts/sign-in-of-credential.js';
import type { Context } from 'hono';
import type { AppEnv } from '../http/app-env.js';
import { DATASET_PATH } from '../http/paths.js';
import { servesViewer } from '../http/security-headers.js';
import { route, type Route } from '../http/route.js';
import { conversionFailuresOf } from '../formats/zarr/conversion-failures.js';
import { allows } from '../datasets/dataset-access.js';
import { READ_GRANT_SECONDS, signReadGrant } from '../datasets/read-grant.js';
import { findPageDataset, listPageDatasets, readStoreDocuments, readZarrIndex, type StoreDocuments } from './dataset-page-data.js';
import { datasetDetailBody, datasetListBody, embeddedViewerPage, viewerStyle } from './dataset-page-views.js';
import { html, page } from './html.js';
import { viewerPreloads } from './viewer-bundle.js';

async function listPage(c: Context<AppEnv>): Promise<Response> {
  const user = c.var.caller?.user;
  const datasets = await listPageDatasets(c.var.deps.db, user);
  return c.html(page({ title: 'Datasets', username: user?.username, body: datasetListBody(datasets), head: viewerStyle }));
}

async function detailPage(c: Context<AppEnv>, id: string): Promise<Response> {
  const { db, objects, config } = c.var.deps;
  const user = c.var.caller?.user;
  const found = await findPageDataset(db, id, user);
  if (!found) {
    return c.html(page({ title: 'Not found', username: user?.username, body: html`<h1>Not found</h1><p>No dataset ${id}.</p><p><a href="/datasets">All datasets</a></p>` }), 404);
  }
  const { dataset, standing } = found;
  const index = await readZarrIndex(objects, id);
  const wanted = c.req.query('recording');
  const selected = index?.stores.find((s) => s.zarr === wanted) ?? index?.stores[0];
  const group = selected && (selected.groups.find((g) => g.name === c.req.query('group')) ?? selected.groups[0])?.name;
  let head = viewerStyle;
  let metadata: StoreDocuments | undefined;
  // A private dataset is seen here only by its owner, members and admins: its viewer reads through a read grant.
  const readGrant =
    dataset.visibility === 'private' && index && user
      ? { grant: signReadGrant(config, id, user.id, c.var.deps.clock.now(), signInOf(c.var.caller)).grant, expires_in: READ_GRANT_SECONDS, refresh: `/datasets/${id}/read-grant` }
      : undefined;
  if (selected && group) {
    metadata = await readStoreDocuments(objects, id, selected.zarr, group);
    const preloads = await viewerPreloads(metadata ? storeCodecs(metadata) : []);
    head = html`${viewerStyle}${preloads.map((href) => html`<link rel="modulepreload" href="${href}">`)}`;
  }
  const failures = conversionFailuresOf(index);
  const input = { dataset, index, selected, group, metadata, failures, readGrant, manage: allows(standing, 'maintain'), annotate: allows(standing, 'annotate'), username: user?.username, zarrBase: `${config.zarrCacheBaseUrl}/${id}/zarr` };
  // A private page carries a grant: never kept by a shared cache.
  if (dataset.visibility === 'private') c.header('Cache-Control', 'private, no-store');
  if (c.req.query('embed') === '1' && (dataset.visibility === 'public' || readGrant)) {
    // The viewer alone has no control that changes anything: other sites may frame it (VIEWER_FRAME_ANCESTORS).
    servesViewer(c, { embed: true });
    return c.html(embeddedViewerPage(input, head));
  }
  servesViewer(c, { embed: false });
  const body = datasetDetailBody(input);
  return c.html(page({ title: dataset.name, username: user?.username, body, head }));
}

/** Names of the codecs the store's arrays use (the bundle splits the heavy ones into their own files). */
function storeCodecs(metadata: StoreDocuments): string[] {
  const names = new Set<string>();
  for (const doc of Object.values(metadata)) {
    for (const codec of ((doc as { codecs?: Array<{ name?: unknown }> }).codecs ?? [])) if (typeof codec.name === 'string') names.add(codec.name);
  }
  return [...names];
}

/** The pages of `/datasets` and `/datasets/:id`, chosen over the JSON API by a browser's Accept (`mountRoutes`). */
export const datasetPages: Route[] = [
  route({
    method: 'get',
    path: '/datasets',
    page: true,
    summary: 'The list of datasets',
    access: 'optional',
    handler: (c) => listPage(c),
  }),
  route({
    method: 'get',
    path: DATASET_PATH,
    page: true,
    summary: "A dataset's page and its signal viewer",
    access: 'optional',
    handler: (c) => detailPage(c, c.req.param('id')!),
  }),
];
