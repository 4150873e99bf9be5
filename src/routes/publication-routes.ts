/**
 * Publication and DOI routes (seed §4): the owner's request and status under `/datasets/:id/publish/...`;
 * the admin's list, approve and deny under `/admin/publish/...`; DOI info, concept and update under
 * `/admin/datasets/:id/doi...`. Every admin action is in the audit log.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Actor } from '../accounts/admin-users.js';
import type { AppEnv } from '../http/app-env.js';
import { authenticate, callerOf, requireRole } from '../http/auth.js';
import { clientIp } from '../http/client-ip.js';
import { bearerSecurity, errorResponses, jsonBody, jsonResponse } from '../http/openapi-helpers.js';
import { createRouter } from '../http/router.js';
import { approvePublication, denyPublication, listPublicationRequests, publicationState, requestPublication, type PublicationRequestView } from '../datasets/publication.js';
import { doiInfo, mintConceptDoi, updateDois, type DoiInfo } from '../datasets/publication-doi.js';
import { ID_PATH, IdParam, tidyDocumentedPaths } from './dataset-schemas.js';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

const RequestSchema = z
  .object({
    id: z.number().int(),
    dataset_id: z.string(),
    dataset_name: z.string(),
    version: z.string(),
    status: z.enum(['pending', 'approved', 'denied']),
    requested_by: z.string().nullable(),
    requested_at: z.string(),
    message: z.string().nullable(),
    decided_by: z.string().nullable(),
    decided_at: z.string().nullable(),
    reason: z.string().nullable(),
    doi: z.string().nullable(),
  })
  .openapi('PublicationRequest');

const DoiRecordSchema = z.object({
  doi: z.string(),
  kind: z.enum(['concept', 'version']),
  version: z.string().nullable(),
  provider: z.string(),
  test: z.boolean(),
  url: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const DoiInfoSchema = z
  .object({
    dataset_id: z.string(),
    doi: z.string().nullable(),
    concept_doi: z.string().nullable(),
    provider: z.enum(['datacite', 'test']),
    test: z.boolean(),
    records: z.array(DoiRecordSchema),
  })
  .openapi('DoiInfo');

function presentRequest(r: PublicationRequestView) {
  return {
    id: r.id,
    dataset_id: r.dataset_id,
    dataset_name: r.dataset_name,
    version: r.version,
    status: r.status,
    requested_by: r.requested_by_username,
    requested_at: iso(r.requested_at)!,
    message: r.message,
    decided_by: r.decided_by_username,
    decided_at: iso(r.decided_at),
    reason: r.reason,
    doi: r.doi,
  };
}

function presentDoiInfo(info: DoiInfo) {
  return {
    dataset_id: info.dataset_id,
    doi: info.doi,
    concept_doi: info.concept_doi,
    provider: info.provider,
    test: info.test,
    records: info.records.map((r) => ({ doi: r.doi, kind: r.kind, version: r.version, provider: r.provider, test: r.test, url: r.url, created_at: iso(r.created_at)!, updated_at: iso(r.updated_at)! })),
  };
}

const admin = [authenticate('any'), requireRole('admin')];
const RequestId = z.object({ id: z.coerce.number().int().positive().openapi({ param: { name: 'id', in: 'path' } }) });
const AdminDatasetId = z.object({ id: z.string().regex(/^(nd|sb)\d{6}$/).openapi({ param: { name: 'id', in: 'path' } }) });
const withErrors = { ...errorResponses, 422: jsonResponse(z.object({ error: z.string(), message: z.string(), details: z.array(z.string()) }), 'Metadata incomplete') };

const routes = {
  request: createRoute({
    method: 'post',
    path: `/datasets/${ID_PATH}/publish/request`,
    summary: 'Request publication of the latest version (owner); needs title, authors, license and description',
    security: bearerSecurity,
    middleware: [authenticate('any')],
    request: { params: IdParam, ...jsonBody(z.object({ message: z.string().trim().max(2000).optional() }), false) },
    responses: { 201: jsonResponse(RequestSchema, 'Pending'), ...withErrors },
  }),
  status: createRoute({
    method: 'get',
    path: `/datasets/${ID_PATH}/publish/status`,
    summary: 'Publication status and requests of a dataset (owner or admin)',
    security: bearerSecurity,
    middleware: [authenticate('any')],
    request: { params: IdParam },
    responses: {
      200: jsonResponse(
        z.object({ dataset_id: z.string(), visibility: z.string(), publication_status: z.string().nullable(), doi: z.string().nullable(), concept_doi: z.string().nullable(), latest_request: RequestSchema.nullable(), requests: z.array(RequestSchema) }),
        'Status',
      ),
      ...errorResponses,
    },
  }),
  list: createRoute({
    method: 'get',
    path: '/admin/publish/requests',
    summary: 'List publication requests, newest first (admin)',
    security: bearerSecurity,
    middleware: admin,
    request: { query: z.object({ status: z.enum(['pending', 'approved', 'denied']).optional(), limit: z.coerce.number().int().min(1).max(500).default(100) }) },
    responses: { 200: jsonResponse(z.object({ requests: z.array(RequestSchema) }), 'Requests'), ...errorResponses },
  }),
  approve: createRoute({
    method: 'post',
    path: '/admin/publish/{id}/approve',
    summary: 'Approve a request: mint or update the DOIs and make the dataset public (admin)',
    security: bearerSecurity,
    middleware: admin,
    request: { params: RequestId },
    responses: { 200: jsonResponse(RequestSchema, 'Approved'), ...withErrors, 502: jsonResponse(z.object({ error: z.string() }), 'DOI provider failed') },
  }),
  deny: createRoute({
    method: 'post',
    path: '/admin/publish/{id}/deny',
    summary: 'Deny a request with a reason (admin)',
    security: bearerSecurity,
    middleware: admin,
    request: { params: RequestId, ...jsonBody(z.object({ reason: z.string().trim().min(1).max(2000) })) },
    responses: { 200: jsonResponse(RequestSchema, 'Denied'), ...errorResponses },
  }),
  doi: createRoute({
    method: 'get',
    path: '/admin/datasets/{id}/doi',
    summary: "A dataset's DOIs and their provider (admin)",
    security: bearerSecurity,
    middleware: admin,
    request: { params: AdminDatasetId },
    responses: { 200: jsonResponse(DoiInfoSchema, 'DOIs'), ...errorResponses },
  }),
  concept: createRoute({
    method: 'post',
    path: '/admin/datasets/{id}/doi/concept',
    summary: 'Mint the concept DOI (or refresh the existing one) (admin)',
    security: bearerSecurity,
    middleware: admin,
    request: { params: AdminDatasetId },
    responses: { 200: jsonResponse(DoiInfoSchema.extend({ created: z.boolean() }), 'Concept DOI'), ...withErrors },
  }),
  update: createRoute({
    method: 'post',
    path: '/admin/datasets/{id}/doi/update',
    summary: "Send the dataset's current metadata for each of its DOIs (admin)",
    security: bearerSecurity,
    middleware: admin,
    request: { params: AdminDatasetId },
    responses: { 200: jsonResponse(DoiInfoSchema.extend({ updated: z.array(z.string()) }), 'Updated'), ...withErrors },
  }),
};

function actorOf(c: Context<AppEnv>): Actor {
  return { user: callerOf(c).user, ip: clientIp(c) };
}

export function publicationRoutes(): OpenAPIHono<AppEnv> {
  const app = createRouter();

  app.openapi(routes.request, async (c) => {
    const body = c.req.header('content-type')?.includes('json') ? c.req.valid('json') : {};
    const r = await requestPublication(c.var.deps, actorOf(c), c.req.valid('param').id, body?.message);
    return c.json(presentRequest(r), 201);
  });

  app.openapi(routes.status, async (c) => {
    const { dataset, requests } = await publicationState(c.var.deps, callerOf(c).user, c.req.valid('param').id);
    const presented = requests.map(presentRequest);
    return c.json(
      { dataset_id: dataset.id, visibility: dataset.visibility, publication_status: dataset.publication_status, doi: dataset.doi, concept_doi: dataset.concept_doi, latest_request: presented[0] ?? null, requests: presented },
      200,
    );
  });

  app.openapi(routes.list, async (c) => {
    const { status, limit } = c.req.valid('query');
    return c.json({ requests: (await listPublicationRequests(c.var.deps, status, limit)).map(presentRequest) }, 200);
  });

  app.openapi(routes.approve, async (c) => c.json(presentRequest(await approvePublication(c.var.deps, actorOf(c), c.req.valid('param').id)), 200));

  app.openapi(routes.deny, async (c) => c.json(presentRequest(await denyPublication(c.var.deps, actorOf(c), c.req.valid('param').id, c.req.valid('json').reason)), 200));

  app.openapi(routes.doi, async (c) => c.json(presentDoiInfo(await doiInfo(c.var.deps, c.req.valid('param').id)), 200));

  app.openapi(routes.concept, async (c) => {
    const info = await mintConceptDoi(c.var.deps, actorOf(c), c.req.valid('param').id);
    return c.json({ ...presentDoiInfo(info), created: info.created }, 200);
  });

  app.openapi(routes.update, async (c) => {
    const info = await updateDois(c.var.deps, actorOf(c), c.req.valid('param').id);
    return c.json({ ...presentDoiInfo(info), updated: info.updated }, 200);
  });

  tidyDocumentedPaths(app);
  return app;
}
