/**
 * Dataset routes (docs/datasets.md): create, list, show, resolve, PATCH, the caller's own list and the admin
 * delete; uploads, credentials and versions live in `content-routes.ts`. A browser opening GET /datasets or
 * /datasets/:id gets the pages of `web/dataset-pages.ts` (same paths, chosen by `mountRoutes`).
 */
import { z } from '@hono/zod-openapi';
import { createDataset } from '../datasets/create-dataset.js';
import { visibleDataset } from '../datasets/dataset-access.js';
import { SANDBOX_CREATIONS_PER_DAY } from '../datasets/dataset-limits.js';
import { deleteDataset } from '../datasets/delete-dataset.js';
import { listDatasets, resolveDataset } from '../datasets/list-datasets.js';
import { presentDataset } from '../datasets/present-dataset.js';
import { storageUseOf } from '../datasets/storage-quota.js';
import { updateDataset } from '../datasets/update-dataset.js';
import { NdsError } from '../core/errors.js';
import { actorOf, callerOf } from '../http/auth.js';
import { ErrorBody, jsonResponse } from '../http/openapi-helpers.js';
import { DATASET_PATH } from '../http/paths.js';
import { route, type Route } from '../http/route.js';
import { CreateDatasetBody, DatasetPage, DatasetSchema, IdParam, PageQuery, PatchDatasetBody, StorageUseSchema } from './dataset-schemas.js';

export const datasetRoutes: Route[] = [
  route({
    method: 'post',
    path: '/datasets',
    summary: 'Create a dataset (approved accounts; a sandbox dataset for accounts that have not completed the sandbox training)',
    access: 'any',
    body: { schema: CreateDatasetBody },
    responses: { 201: jsonResponse(DatasetSchema, 'Created'), 429: jsonResponse(ErrorBody, `rate_limited: this account made ${SANDBOX_CREATIONS_PER_DAY} sandbox datasets in the last day; wait Retry-After seconds`) },
    handler: async (c, { body }) => {
      const dataset = await createDataset(c.var.deps.db, callerOf(c).user, body, c.var.deps.config, c.var.deps.datasetLimits.sandboxCreations);
      return c.json(presentDataset(dataset, c.var.deps.config), 201);
    },
  }),

  route({
    method: 'get',
    path: '/datasets',
    summary: "List public datasets and the caller's own private ones, newest first",
    access: 'optional',
    query: PageQuery,
    responses: { 200: jsonResponse(DatasetPage, 'A page of datasets') },
    handler: async (c, { query }) => {
      const page = await listDatasets(c.var.deps.db, c.var.caller?.user, { ...query, scope: 'visible' });
      return c.json({ datasets: page.datasets.map((d) => presentDataset(d, c.var.deps.config)), next_cursor: page.nextCursor }, 200);
    },
  }),

  route({
    method: 'get',
    path: '/users/me/datasets',
    summary: "The caller's own datasets, private and sandbox ones included",
    access: 'any',
    query: PageQuery,
    responses: { 200: jsonResponse(DatasetPage, 'A page of datasets') },
    handler: async (c, { query }) => {
      const page = await listDatasets(c.var.deps.db, callerOf(c).user, { ...query, scope: 'owned' });
      return c.json({ datasets: page.datasets.map((d) => presentDataset(d, c.var.deps.config)), next_cursor: page.nextCursor }, 200);
    },
  }),

  route({
    method: 'get',
    path: '/users/me/storage',
    summary: "What the caller's datasets hold against the storage quotas (uploaded content, uploads in parts under way, hosted repositories)",
    access: 'any',
    responses: { 200: jsonResponse(StorageUseSchema, 'Bytes held, and the limits (null: none)') },
    handler: async (c) => c.json(await storageUseOf(c.var.deps, callerOf(c).user), 200),
  }),

  route({
    method: 'get',
    // `owner/name` has a slash: the parameter takes the rest of the path.
    path: '/datasets/resolve/:sourceId{.+}',
    summary: 'The id of the dataset known by a source id (`owner/name`, a repository URL or an external id)',
    access: 'optional',
    params: z.object({ sourceId: z.string().min(1).openapi({ param: { name: 'sourceId', in: 'path' }, example: 'OpenNeuroDatasets/ds002718' }) }),
    responses: { 200: jsonResponse(z.object({ id: z.string() }), 'The dataset id') },
    handler: async (c, { params }) => {
      // Decoded once already, by the router: decoding again would turn `%2500` into a NUL past the input checks.
      const sourceId = params.sourceId;
      const viewer = c.var.caller?.user;
      const found = await resolveDataset(c.var.deps.db, sourceId, viewer);
      if (!found) throw new NdsError('dataset_not_found', { message: `No dataset is known as ${sourceId}.` });
      return c.json({ id: found.id }, 200);
    },
  }),

  route({
    method: 'get',
    path: DATASET_PATH,
    summary: 'Dataset details (a private dataset is 404 to all but its owner and admins)',
    access: 'optional',
    params: IdParam,
    responses: { 200: jsonResponse(DatasetSchema, 'The dataset') },
    handler: async (c, { params }) => {
      const dataset = await visibleDataset(c.var.deps.db, params.id, c.var.caller?.user);
      return c.json(presentDataset(dataset, c.var.deps.config), 200);
    },
  }),

  route({
    method: 'patch',
    path: DATASET_PATH,
    summary: 'Change descriptive fields (owner or admin); public → private by an admin only',
    access: 'any',
    params: IdParam,
    body: { schema: PatchDatasetBody },
    responses: { 200: jsonResponse(DatasetSchema, 'The dataset') },
    handler: async (c, { params, body }) => {
      const dataset = await updateDataset(c.var.deps, actorOf(c), params.id, body);
      return c.json(presentDataset(dataset, c.var.deps.config), 200);
    },
  }),

  route({
    method: 'delete',
    path: '/admin/datasets/:id',
    summary: 'Delete a dataset and all its resources (admin; idempotent)',
    access: 'admin',
    params: z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' } }) }),
    responses: { 200: jsonResponse(z.object({ id: z.string(), deleted: z.boolean(), objects_deleted: z.number().int() }), 'Deleted (or already gone)') },
    handler: async (c, { params }) => c.json(await deleteDataset(c.var.deps, actorOf(c), params.id), 200),
  }),
];
