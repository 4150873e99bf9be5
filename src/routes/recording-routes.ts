/** The recording catalogue: `GET /recordings` across datasets, `GET /datasets/:id/recordings` for one. */
import { anonymousLimitResponse, countAnonymousCatalogueRequest } from '../http/catalogue-limits.js';
import { jsonResponse } from '../http/openapi-helpers.js';
import { DATASET_PATH } from '../http/paths.js';
import { route, type Route } from '../http/route.js';
import { datasetRecordings, listRecordings } from '../recordings/catalogue.js';
import { IdParam } from './dataset-schemas.js';
import { CatalogueQuery, DatasetRecordings, RecordingPage } from './recording-schemas.js';

export const recordingRoutes: Route[] = [
  route({
    method: 'get',
    path: '/recordings',
    summary: 'List converted recordings across datasets (public, your own, all for admins), filtered by entities, rate, channels, duration and events; cursor paging',
    access: 'optional',
    query: CatalogueQuery,
    responses: { 200: jsonResponse(RecordingPage, 'A page of recordings; pass next_cursor back for the next one'), 429: anonymousLimitResponse },
    handler: async (c, { query }) => {
      await countAnonymousCatalogueRequest(c);
      const { limit, cursor, ...filters } = query;
      const page = await listRecordings(c.var.deps, c.var.caller?.user, filters, { limit, ...(cursor ? { cursor } : {}) });
      return c.json(page, 200);
    },
  }),
  route({
    method: 'get',
    path: `${DATASET_PATH}/recordings`,
    summary: "A dataset's converted recordings, and the recordings that could not be converted with why",
    access: 'optional',
    params: IdParam,
    responses: { 200: jsonResponse(DatasetRecordings, 'Every recording of the dataset, and the failures of its last conversion'), 429: anonymousLimitResponse },
    handler: async (c, { params }) => {
      await countAnonymousCatalogueRequest(c);
      return c.json(await datasetRecordings(c.var.deps, c.var.caller?.user, params.id), 200);
    },
  }),
];
