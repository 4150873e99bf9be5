/**
 * Publication and DOI routes (docs/api.md): the owner's request and status under `/datasets/:id/publish/...`;
 * the admin's list, approve and deny under `/admin/publish/...`; DOI info, concept and update under
 * `/admin/datasets/:id/doi...`. Every admin action is in the audit log.
 */
import { z } from '@hono/zod-openapi';
import { actorOf, callerOf } from '../http/auth.js';
import { errorResponses, jsonResponse } from '../http/openapi-helpers.js';
import { DATASET_PATH } from '../http/paths.js';
import { route, type Route } from '../http/route.js';
import { approvePublication, denyPublication, listPublicationRequests, publicationState, requestPublication, type PublicationRequestView } from '../datasets/publication.js';
import { doiInfo, mintConceptDoi, updateDois, type DoiInfo } from '../datasets/publication-doi.js';
import { IdParam } from './dataset-schemas.js';

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
    failed_recordings: z
      .array(z.object({ path: z.string(), code: z.string(), reason: z.string() }))
      .nullable()
      .openapi({ description: "While pending: the recordings the dataset's Zarr copy could not convert (a reviewer should see them); null once decided" }),
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
    failed_recordings: r.failed_recordings?.map((f) => ({ path: f.path, code: f.code, reason: f.reason })) ?? null,
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

const RequestId = z.object({ id: z.coerce.number().int().positive().openapi({ param: { name: 'id', in: 'path' } }) });
const AdminDatasetId = z.object({ id: z.string().regex(/^(nd|sb)\d{6}$/).openapi({ param: { name: 'id', in: 'path' } }) });
const incomplete = { 422: jsonResponse(z.object({ error: z.string(), message: z.string(), details: z.array(z.string()) }), 'Metadata incomplete') };

export const publicationRoutes: Route[] = [
  route({
    method: 'post',
    path: `${DATASET_PATH}/publish/request`,
    summary: 'Request publication of the latest version (owner); needs title, authors, license and description. The administrators get a mail; the answer lists recordings that could not be converted',
    access: 'any',
    params: IdParam,
    body: { schema: z.object({ message: z.string().trim().max(2000).optional() }), optional: true },
    responses: { 201: jsonResponse(RequestSchema, 'Pending'), 409: errorResponses[409], ...incomplete },
    handler: async (c, { params, body }) => {
      const r = await requestPublication(c.var.deps, actorOf(c), params.id, body?.message);
      return c.json(presentRequest(r), 201);
    },
  }),

  route({
    method: 'get',
    path: `${DATASET_PATH}/publish/status`,
    summary: 'Publication status and requests of a dataset (owner or admin)',
    access: 'any',
    params: IdParam,
    responses: {
      200: jsonResponse(
        z.object({ dataset_id: z.string(), visibility: z.string(), publication_status: z.string().nullable(), doi: z.string().nullable(), concept_doi: z.string().nullable(), latest_request: RequestSchema.nullable(), requests: z.array(RequestSchema) }),
        'Status',
      ),
    },
    handler: async (c, { params }) => {
      const { dataset, requests } = await publicationState(c.var.deps, callerOf(c).user, params.id);
      const presented = requests.map(presentRequest);
      return c.json(
        { dataset_id: dataset.id, visibility: dataset.visibility, publication_status: dataset.publication_status, doi: dataset.doi, concept_doi: dataset.concept_doi, latest_request: presented[0] ?? null, requests: presented },
        200,
      );
    },
  }),

  route({
    method: 'get',
    path: '/admin/publish/requests',
    summary: 'List publication requests, newest first (admin)',
    access: 'admin',
    query: z.object({ status: z.enum(['pending', 'approved', 'denied']).optional(), limit: z.coerce.number().int().min(1).max(500).default(100) }),
    responses: { 200: jsonResponse(z.object({ requests: z.array(RequestSchema) }), 'Requests') },
    handler: async (c, { query }) => c.json({ requests: (await listPublicationRequests(c.var.deps, query.status, query.limit)).map(presentRequest) }, 200),
  }),

  route({
    method: 'post',
    path: '/admin/publish/:id/approve',
    summary: 'Approve a request: mint or update the DOIs and make the dataset public (admin); the owner gets a mail',
    access: 'admin',
    params: RequestId,
    responses: { 200: jsonResponse(RequestSchema, 'Approved'), 404: errorResponses[404], 409: errorResponses[409], ...incomplete, 502: jsonResponse(z.object({ error: z.string() }), 'DOI provider failed') },
    handler: async (c, { params }) => c.json(presentRequest(await approvePublication(c.var.deps, actorOf(c), params.id)), 200),
  }),

  route({
    method: 'post',
    path: '/admin/publish/:id/deny',
    summary: 'Deny a request with a reason (admin); the owner gets it by mail',
    access: 'admin',
    params: RequestId,
    body: { schema: z.object({ reason: z.string().trim().min(1).max(2000) }) },
    responses: { 200: jsonResponse(RequestSchema, 'Denied'), 409: errorResponses[409] },
    handler: async (c, { params, body }) => c.json(presentRequest(await denyPublication(c.var.deps, actorOf(c), params.id, body.reason)), 200),
  }),

  route({
    method: 'get',
    path: '/admin/datasets/:id/doi',
    summary: "A dataset's DOIs and their provider (admin)",
    access: 'admin',
    params: AdminDatasetId,
    responses: { 200: jsonResponse(DoiInfoSchema, 'DOIs') },
    handler: async (c, { params }) => c.json(presentDoiInfo(await doiInfo(c.var.deps, params.id)), 200),
  }),

  route({
    method: 'post',
    path: '/admin/datasets/:id/doi/concept',
    summary: 'Mint the concept DOI (or refresh the existing one) (admin)',
    access: 'admin',
    params: AdminDatasetId,
    responses: { 200: jsonResponse(DoiInfoSchema.extend({ created: z.boolean() }), 'Concept DOI'), 409: errorResponses[409], ...incomplete },
    handler: async (c, { params }) => {
      const info = await mintConceptDoi(c.var.deps, actorOf(c), params.id);
      return c.json({ ...presentDoiInfo(info), created: info.created }, 200);
    },
  }),

  route({
    method: 'post',
    path: '/admin/datasets/:id/doi/update',
    summary: "Send the dataset's current metadata for each of its DOIs (admin)",
    access: 'admin',
    params: AdminDatasetId,
    responses: { 200: jsonResponse(DoiInfoSchema.extend({ updated: z.array(z.string()) }), 'Updated'), ...incomplete },
    handler: async (c, { params }) => {
      const info = await updateDois(c.var.deps, actorOf(c), params.id);
      return c.json({ ...presentDoiInfo(info), updated: info.updated }, 200);
    },
  }),
];
