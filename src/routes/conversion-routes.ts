/**
 * Routes of the conversion pipeline: the push webhook, the completion callback, and the admin routes
 * behind `nds admin zarr regenerate|status|backfill`.
 */
import { createHmac } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import { constantTimeEqual, sha256Hex } from '../core/secrets.js';
import { NdsError } from '../core/errors.js';
import { jsonResponse } from '../http/openapi-helpers.js';
import { bodyMedia, readBodyBytes, type BodyMedia } from '../http/request-input.js';
import { route, type Route } from '../http/route.js';
import { takeGithubDelivery } from '../conversion/github-push.js';
import type { PushPayload } from '../conversion/push-rule.js';
import { regenerateZarr, zarrStatus, zarrSweepList } from '../conversion/zarr-administration.js';
import { recordZarrReady } from '../conversion/zarr-ready.js';
import { readConversionFailures } from '../formats/zarr/conversion-failures.js';

const ZarrReadyBody = z
  .object({
    dataset_id: z.string().regex(/^(nd|sb)\d{6}$/),
    status: z.enum(['ready', 'failed', 'converting']),
    commit: z.string().regex(/^[0-9a-f]{40}$/, 'a 40-hex commit id'),
    store_count: z.number().int().min(0).optional(),
    index_etag: z.string().max(200).optional(),
    converted: z.array(z.string().max(1024)).max(100_000).optional(),
    removed: z.array(z.string().max(1024)).max(100_000).optional(),
    failure_count: z.number().int().min(0).optional(),
    error: z.string().max(10_000).optional(),
  })
  .openapi('ZarrReady');

const DatasetId = z.object({ id: z.string().regex(/^(nd|sb)\d{6}$/).openapi({ param: { name: 'id', in: 'path' } }) });

/** GitHub sends push payloads of up to 25 MB. */
const GITHUB_PAYLOAD_BYTES = 25 * 1024 * 1024;

function verifyGithubSignature(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return constantTimeEqual(expected, header);
}

/**
 * The payload of a delivery, whichever content type the webhook was set up with: the JSON body, or the
 * `payload` field of a form body (GitHub's default). The signature was checked on the raw bytes before.
 */
function githubPayload(raw: Buffer, media: BodyMedia | undefined): unknown {
  let text = raw.toString('utf8');
  if (media === 'form') {
    const field = new URLSearchParams(text).get('payload');
    if (field === null) throw new NdsError('validation_failed', { details: ['payload: required form field (the JSON payload)'] });
    text = field;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new NdsError('validation_failed', { details: [media === 'form' ? 'payload: not JSON' : 'body: not JSON'] });
  }
}

export const conversionRoutes: Route[] = [
  route({
    method: 'post',
    path: '/webhooks/github',
    summary: 'Push notification from GitHub (X-Hub-Signature-256); dispatches a conversion per the push rule for every dataset whose source_repo is the repository (or, when none is, the one naming it among its external ids). A replay of a delivery (its X-GitHub-Delivery id or its body seen in the last three days) answers `duplicate_delivery`',
    access: 'none',
    rawBody: 'the payload GitHub signed: JSON, or a form with the JSON in `payload`',
    responses: {
      200: jsonResponse(z.object({ dispatched: z.boolean(), reason: z.string(), datasets: z.number().int().optional(), dataset_id: z.string().optional(), dataset_ids: z.array(z.string()).optional() }), 'What was decided: how many datasets convert, and which of them are public'),
    },
    handler: async (c) => {
      const deps = c.var.deps;
      const secret = deps.config.githubWebhookSecret;
      if (!secret) throw new NdsError('not_configured', { message: 'GITHUB_WEBHOOK_SECRET is not set on this server.' });
      const media = bodyMedia(c, ['json', 'form']);
      const raw = Buffer.from(await readBodyBytes(c, GITHUB_PAYLOAD_BYTES));
      if (!verifyGithubSignature(secret, raw, c.req.header('x-hub-signature-256'))) {
        throw new NdsError('unauthorized', { message: 'The X-Hub-Signature-256 signature does not match.' });
      }
      const answer = await takeGithubDelivery(deps, {
        bodySha256: sha256Hex(raw),
        deliveryId: c.req.header('x-github-delivery')?.slice(0, 200),
        event: c.req.header('x-github-event'),
        payload: () => {
          const payload = githubPayload(raw, media) as PushPayload;
          if (!payload || typeof payload !== 'object') throw new NdsError('validation_failed', { details: ['body: expected an object'] });
          return payload;
        },
      });
      return c.json(answer, 200);
    },
  }),

  route({
    method: 'post',
    path: '/webhooks/zarr-ready',
    summary: 'Completion callback of the conversion job (header X-Webhook-Token)',
    access: 'none',
    body: { schema: ZarrReadyBody, maxBytes: 32 * 1024 * 1024, maxKeys: 250_000 },
    responses: { 200: jsonResponse(z.object({ applied: z.boolean(), reason: z.string().optional(), purged: z.array(z.string()) }), 'Recorded') },
    handler: async (c, { body }) => {
      const deps = c.var.deps;
      const secret = deps.config.serviceWebhookToken;
      if (!secret) throw new NdsError('not_configured', { message: 'SERVICE_WEBHOOK_TOKEN is not set on this server.' });
      const token = c.req.header('x-webhook-token');
      if (!token || !constantTimeEqual(token, secret)) throw new NdsError('unauthorized', { message: 'X-Webhook-Token is missing or wrong.' });
      return c.json(await recordZarrReady(deps, body), 200);
    },
  }),

  route({
    method: 'post',
    path: '/admin/datasets/:id/zarr/regenerate',
    summary: 'Dispatch a (full) reconversion of the Zarr copy',
    access: 'admin',
    params: DatasetId,
    body: { schema: z.object({ full: z.boolean().default(false), ref: z.string().max(200).default('main') }), optional: true },
    responses: { 202: jsonResponse(z.object({ dispatched: z.literal(true), mode: z.enum(['local', 'github']), job_id: z.number().optional(), coalesced: z.boolean().optional() }), 'Dispatched') },
    handler: async (c, { params, body }) => {
      const result = await regenerateZarr(c.var.deps, params.id, { ref: body?.ref ?? 'main', full: body?.full ?? false });
      return c.json({ dispatched: true as const, ...result }, 202);
    },
  }),

  route({
    method: 'get',
    path: '/admin/datasets/:id/zarr',
    summary: "The Zarr copy's status, store count, source commit and recent jobs",
    access: 'admin',
    params: DatasetId,
    responses: { 200: jsonResponse(z.record(z.string(), z.unknown()), 'Status') },
    handler: async (c, { params }) => {
      const { state: d, jobs } = await zarrStatus(c.var.deps, params.id);
      const failures = await readConversionFailures(c.var.deps, params.id);
      return c.json(
        {
          dataset_id: d.id,
          visibility: d.visibility,
          zarr_status: d.zarr_status,
          zarr_converted_at: d.zarr_converted_at ? new Date(d.zarr_converted_at).toISOString() : null,
          zarr_store_count: d.zarr_store_count,
          zarr_index_etag: d.zarr_index_etag,
          zarr_source_commit: d.zarr_source_commit,
          // Recordings the last conversion could not convert, with the reason the converter gave.
          zarr_failure_count: failures?.length ?? null,
          failures: failures ?? [],
          jobs: jobs.map((j) => ({
            id: j.id,
            state: j.state,
            ref: j.ref,
            full: j.full,
            reason: j.reason,
            attempts: j.attempts,
            requested_at: new Date(j.requested_at).toISOString(),
            finished_at: j.finished_at ? new Date(j.finished_at).toISOString() : null,
            error: j.error,
          })),
        },
        200,
      );
    },
  }),

  route({
    method: 'get',
    path: '/admin/zarr/datasets',
    summary: 'Datasets for a sweep (backfill): id and Zarr state, public ones by default',
    access: 'admin',
    query: z.object({ visibility: z.enum(['public', 'private', 'all']).default('public') }),
    responses: {
      200: jsonResponse(z.object({ datasets: z.array(z.object({ id: z.string(), visibility: z.string(), zarr_status: z.string().nullable(), zarr_source_commit: z.string().nullable() })) }), 'Datasets'),
    },
    handler: async (c, { query }) => {
      return c.json({ datasets: await zarrSweepList(c.var.deps, query.visibility) }, 200);
    },
  }),
];
