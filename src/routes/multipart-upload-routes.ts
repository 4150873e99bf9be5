/**
 * Uploads in parts (decision 0020): start, ask which parts are stored, get part URLs, complete, abort. Every
 * route first asks whether the caller may write the dataset (`uploadableDataset`): a private dataset and its
 * uploads answer as an unknown id does, whatever upload id is named.
 */
import { z } from '@hono/zod-openapi';
import { uploadableDataset } from '../datasets/dataset-access.js';
import { abortUpload, completeUploadWithin, expiresAt, findUpload, listUploads, partUrls, startUpload, storedParts, type UploadRecord } from '../datasets/multipart-uploads.js';
import { callerOf } from '../http/auth.js';
import { jsonResponse } from '../http/openapi-helpers.js';
import { DATASET_PATH } from '../http/paths.js';
import { route, type Route } from '../http/route.js';
import { IdParam } from './dataset-schemas.js';
import {
  CompletedUploadSchema,
  CompleteUploadBody,
  CompletingUploadSchema,
  PartUrlsBody,
  PartUrlsSchema,
  StartedUploadSchema,
  StartUploadBody,
  UploadIdParams,
  UploadSettingsSchema,
  UploadStatusSchema,
} from './multipart-upload-schemas.js';

const UPLOADS = `${DATASET_PATH}/multipart-uploads`;
const UPLOAD = `${UPLOADS}/:upload_id{[0-9a-f]{32}}`;

function presentUpload(deps: { config: { uploadStaleAfterS: number }; objects: { partChecksum: 'sha256' | 'crc32' } }, r: UploadRecord) {
  return { upload_id: r.upload_id, path: r.path, size: r.size, sha256: r.sha256, part_size: r.part_size, part_count: r.part_count, part_checksum: deps.objects.partChecksum, created_at: r.created_at, expires_at: expiresAt(deps.config, r) };
}

export const multipartUploadRoutes: Route[] = [
  route({
    method: 'get',
    path: UPLOADS,
    summary: "The part threshold and sizes, and the caller's unfinished uploads in parts to this dataset (owner or admin)",
    access: 'any',
    params: IdParam,
    responses: { 200: jsonResponse(UploadSettingsSchema, 'Settings and unfinished uploads') },
    handler: async (c, { params }) => {
      const { deps } = c.var;
      const user = callerOf(c).user;
      const dataset = await uploadableDataset(deps.db, params.id, user);
      const uploads = await listUploads(deps, dataset.id, user.id);
      return c.json({ part_threshold: deps.config.uploadPartThreshold, part_size: deps.config.uploadPartSize, stale_after_s: deps.config.uploadStaleAfterS, uploads: uploads.map((u) => presentUpload(deps, u)) }, 200);
    },
  }),

  route({
    method: 'post',
    path: UPLOADS,
    summary: 'Start uploading one file in parts; content already stored (by sha256) is answered "present"',
    access: 'any',
    params: IdParam,
    body: { schema: StartUploadBody },
    responses: { 200: jsonResponse(StartedUploadSchema, 'Present, or started') },
    handler: async (c, { params, body }) => {
      const user = callerOf(c).user;
      const dataset = await uploadableDataset(c.var.deps.db, params.id, user);
      return c.json(await startUpload(c.var.deps, dataset.id, user.id, body), 200);
    },
  }),

  route({
    method: 'get',
    path: UPLOAD,
    summary: 'An upload in parts and the parts stored so far',
    access: 'any',
    params: UploadIdParams,
    responses: { 200: jsonResponse(UploadStatusSchema, 'The upload') },
    handler: async (c, { params }) => {
      const dataset = await uploadableDataset(c.var.deps.db, params.id, callerOf(c).user);
      const record = await findUpload(c.var.deps, dataset.id, params.upload_id);
      return c.json({ ...presentUpload(c.var.deps, record), parts: await storedParts(c.var.deps, record) }, 200);
    },
  }),

  route({
    method: 'post',
    path: `${UPLOAD}/part-urls`,
    summary: "Presigned PUT URLs (1 hour) of parts, each bound to the part's size and SHA-256, or CRC-32 where part_checksum says so (up to 100 a request)",
    access: 'any',
    params: UploadIdParams,
    body: { schema: PartUrlsBody },
    responses: { 200: jsonResponse(PartUrlsSchema, 'One URL a part, in order') },
    handler: async (c, { params, body }) => {
      const dataset = await uploadableDataset(c.var.deps.db, params.id, callerOf(c).user);
      const record = await findUpload(c.var.deps, dataset.id, params.upload_id);
      return c.json({ parts: await partUrls(c.var.deps, record, body.parts) }, 200);
    },
  }),

  route({
    method: 'post',
    path: `${UPLOAD}/complete`,
    summary: "Assemble the parts; the file is stored only when the SHA-256 of the whole assembled file is the one given",
    access: 'any',
    params: UploadIdParams,
    body: { schema: CompleteUploadBody },
    responses: {
      200: jsonResponse(CompletedUploadSchema, 'Stored (or found stored already)'),
      202: jsonResponse(CompletingUploadSchema, 'Still being assembled and checked (UPLOAD_COMPLETE_WAIT_MS passed): ask again with the same body to wait for the result'),
    },
    handler: async (c, { params, body }) => {
      const dataset = await uploadableDataset(c.var.deps.db, params.id, callerOf(c).user);
      const answer = await completeUploadWithin(c.var.deps, dataset.id, params.upload_id, body.sha256, c.var.deps.config.uploadCompleteWaitMs);
      return answer.status === 'completing' ? c.json(answer, 202) : c.json(answer, 200);
    },
  }),

  route({
    method: 'delete',
    path: UPLOAD,
    summary: 'Abort an upload in parts and delete its parts',
    access: 'any',
    params: UploadIdParams,
    responses: { 200: jsonResponse(z.object({ aborted: z.literal(true) }), 'Aborted') },
    handler: async (c, { params }) => {
      const dataset = await uploadableDataset(c.var.deps.db, params.id, callerOf(c).user);
      await abortUpload(c.var.deps, await findUpload(c.var.deps, dataset.id, params.upload_id));
      return c.json({ aborted: true as const }, 200);
    },
  }),
];
