/**
 * Dataset routes (CONTRACT §3): create, list, show, resolve, PATCH, the caller's own list and the admin
 * delete; uploads, credentials and versions live in `content-routes.ts`. Answers are JSON; a browser
 * asking for HTML on GET /datasets and /datasets/:id is passed on to the pages.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context, Next } from 'hono';
import type { Actor } from '../accounts/admin-users.js';
import type { AppEnv } from '../http/app-env.js';
import { authenticate, callerOf, requireRole } from '../http/auth.js';
import { clientIp } from '../http/client-ip.js';
import { NdsError } from '../core/errors.js';
import { bearerSecurity, errorResponses, jsonBody, jsonResponse } from '../http/openapi-helpers.js';
import { createRouter } from '../http/router.js';
import { contentRoutes } from './content-routes.js';
import { createDataset } from '../datasets/create-dataset.js';
import { canSee, visibleDataset } from '../datasets/dataset-access.js';
import { deleteDataset } from '../datasets/delete-dataset.js';
import { listDatasets, resolveDataset } from '../datasets/list-datasets.js';
import { presentDataset } from '../datasets/present-dataset.js';
import { CreateDatasetBody, DatasetPage, DatasetSchema, ID_PATH, IdParam, PageQuery, PatchDatasetBody, tidyDocumentedPaths } from './dataset-schemas.js';
import { updateDataset } from '../datasets/update-dataset.js';

const routes = {
  create: createRoute({
    method: 'post',
    path: '/datasets',
    summary: 'Create a dataset (approved accounts; a sandbox dataset for accounts that have not completed the sandbox training)',
    security: bearerSecurity,
    middleware: [authenticate('any')],
    request: jsonBody(CreateDatasetBody),
    responses: { 201: jsonResponse(DatasetSchema, 'Created'), ...errorResponses },
  }),
  list: createRoute({
    method: 'get',
    path: '/datasets',
    summary: "List public datasets and the caller's own private ones, newest first",
    middleware: [authenticate('optional')],
    request: { query: PageQuery },
    responses: { 200: jsonResponse(DatasetPage, 'A page of datasets'), 400: errorResponses[400] },
  }),
  mine: createRoute({
    method: 'get',
    path: '/users/me/datasets',
    summary: "The caller's own datasets, private and sandbox ones included",
    security: bearerSecurity,
    middleware: [authenticate('any')],
    request: { query: PageQuery },
    responses: { 200: jsonResponse(DatasetPage, 'A page of datasets'), 401: errorResponses[401] },
  }),
  show: createRoute({
    method: 'get',
    path: `/datasets/${ID_PATH}`,
    summary: 'Dataset details (a private dataset is 404 to all but its owner and admins)',
    middleware: [authenticate('optional')],
    request: { params: IdParam },
    responses: { 200: jsonResponse(DatasetSchema, 'The dataset'), 404: errorResponses[404] },
  }),
  patch: createRoute({
    method: 'patch',
    path: `/datasets/${ID_PATH}`,
    summary: 'Change descriptive fields (owner or admin); public → private by an admin only',
    security: bearerSecurity,
    middleware: [authenticate('any')],
    request: { params: IdParam, ...jsonBody(PatchDatasetBody) },
    responses: { 200: jsonResponse(DatasetSchema, 'The dataset'), ...errorResponses },
  }),
  remove: createRoute({
    method: 'delete',
    path: '/admin/datasets/{id}',
    summary: 'Delete a dataset and all its resources (admin; idempotent)',
    security: bearerSecurity,
    middleware: [authenticate('any'), requireRole('admin')],
    request: { params: z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' } }) }) },
    responses: {
      200: jsonResponse(z.object({ id: z.string(), deleted: z.boolean(), objects_deleted: z.number().int() }), 'Deleted (or already gone)'),
      ...errorResponses,
    },
  }),
};

/** A browser navigating to the page wants HTML; API clients send Accept: application/json or nothing. */
function wantsHtml(c: Context<AppEnv>): boolean {
  const accept = c.req.header('accept') ?? '';
  return accept.includes('text/html') && !c.req.header('authorization');
}

async function passToPages(c: Context<AppEnv>, next: Next): Promise<never> {
  await next();
  return c.res as never;
}

function actorOf(c: Context<AppEnv>): Actor {
  return { user: callerOf(c).user, ip: clientIp(c) };
}

export function datasetsRoutes(): OpenAPIHono<AppEnv> {
  const app = createRouter();

  app.openapi(routes.create, async (c) => {
    const dataset = await createDataset(c.var.deps.db, callerOf(c).user, c.req.valid('json'), c.var.deps.config);
    return c.json(presentDataset(dataset, c.var.deps.config), 201);
  });

  app.openapi(routes.list, async (c, next) => {
    if (wantsHtml(c)) return passToPages(c, next);
    const { limit, cursor } = c.req.valid('query');
    const page = await listDatasets(c.var.deps.db, c.var.caller?.user, { limit, cursor, scope: 'visible' });
    return c.json({ datasets: page.datasets.map((d) => presentDataset(d, c.var.deps.config)), next_cursor: page.nextCursor }, 200);
  });

  app.openapi(routes.mine, async (c) => {
    const { limit, cursor } = c.req.valid('query');
    const page = await listDatasets(c.var.deps.db, callerOf(c).user, { limit, cursor, scope: 'owned' });
    return c.json({ datasets: page.datasets.map((d) => presentDataset(d, c.var.deps.config)), next_cursor: page.nextCursor }, 200);
  });

  // `owner/name` has a slash, which an OpenAPI path parameter cannot carry: a plain route.
  app.get('/datasets/resolve/:sourceId{.+}', authenticate('optional'), async (c) => {
    const sourceId = decodeURIComponent(c.req.param('sourceId'));
    const viewer = c.var.caller?.user;
    const found = await resolveDataset(c.var.deps.db, sourceId, (d) => canSee(viewer, d));
    if (!found) throw new NdsError('dataset_not_found', { message: `No dataset is known as ${sourceId}.` });
    return c.json({ id: found.id }, 200);
  });

  app.openapi(routes.show, async (c, next) => {
    if (wantsHtml(c)) return passToPages(c, next);
    const dataset = await visibleDataset(c.var.deps.db, c.req.valid('param').id, c.var.caller?.user);
    return c.json(presentDataset(dataset, c.var.deps.config), 200);
  });

  app.openapi(routes.patch, async (c) => {
    const dataset = await updateDataset(c.var.deps, actorOf(c), c.req.valid('param').id, c.req.valid('json'));
    return c.json(presentDataset(dataset, c.var.deps.config), 200);
  });

  app.openapi(routes.remove, async (c) => c.json(await deleteDataset(c.var.deps, actorOf(c), c.req.valid('param').id), 200));

  app.route('/', contentRoutes());
  tidyDocumentedPaths(app);
  return app;
}
