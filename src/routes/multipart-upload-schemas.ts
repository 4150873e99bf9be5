/** Bodies and answers of the multipart upload routes (`multipart-upload-routes.ts`, decision 0020). */
import { z } from '@hono/zod-openapi';
import { MAX_OBJECT_BYTES, MAX_PARTS } from '../objects/object-store.js';
import { IdParam } from './dataset-schemas.js';

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits');
const Crc32 = z.string().regex(/^[0-9a-f]{8}$/, '8 lower-case hex digits');
const PartChecksum = z.enum(['sha256', 'crc32']).openapi({ description: 'What each part URL is bound to besides its size: its SHA-256, or its CRC-32 (zlib\'s), which this store takes instead (decision 0032)' });

export const UploadIdParams = IdParam.extend({
  upload_id: z.string().regex(/^[0-9a-f]{32}$/, '32 hex digits').openapi({ param: { name: 'upload_id', in: 'path' } }),
});

export const StartUploadBody = z
  .object({
    path: z.string().min(1).max(1024),
    size: z.number().int().min(1).max(MAX_OBJECT_BYTES),
    sha256: Sha256.optional().openapi({ description: 'When known: content already stored is answered "present"; completion must then name the same hash' }),
  })
  .openapi('StartMultipartUpload');

const UploadFields = {
  upload_id: z.string(),
  path: z.string(),
  size: z.number().int(),
  sha256: z.string().nullable(),
  part_size: z.number().int().openapi({ description: 'Every part but the last has exactly this many bytes' }),
  part_count: z.number().int(),
  part_checksum: PartChecksum,
  created_at: z.string(),
  expires_at: z.string().openapi({ description: 'When the server aborts the upload if it is not completed (UPLOAD_STALE_AFTER_S)' }),
};

export const MultipartUploadSchema = z.object(UploadFields).openapi('MultipartUpload');

export const StartedUploadSchema = z
  .object({
    status: z.enum(['present', 'parts']),
    path: z.string(),
    size: z.number().int(),
    sha256: z.string().nullable().optional(),
    upload_id: z.string().optional(),
    part_size: z.number().int().optional(),
    part_count: z.number().int().optional(),
    part_checksum: PartChecksum.optional(),
    created_at: z.string().optional(),
    expires_at: z.string().optional(),
  })
  .openapi('StartedMultipartUpload');

export const UploadSettingsSchema = z
  .object({
    part_threshold: z.number().int().openapi({ description: 'Files of at least this many bytes go up in parts' }),
    part_size: z.number().int().openapi({ description: 'The smallest part size; larger files get larger parts (at most 10,000)' }),
    stale_after_s: z.number().int(),
    uploads: z.array(MultipartUploadSchema).openapi({ description: "The caller's unfinished uploads to this dataset, oldest first" }),
  })
  .openapi('MultipartUploads');

export const UploadStatusSchema = MultipartUploadSchema.extend({
  parts: z.array(z.object({ part_number: z.number().int(), size: z.number().int() })).openapi({ description: 'Parts stored whole, by number' }),
}).openapi('MultipartUploadStatus');

export const PartUrlsBody = z
  .object({
    parts: z
      .array(
        z
          .object({ part_number: z.number().int().min(1).max(MAX_PARTS), sha256: Sha256.optional(), crc32: Crc32.optional().openapi({ description: "The part's CRC-32, where part_checksum is crc32" }) })
          .refine((p) => p.sha256 !== undefined || p.crc32 !== undefined, 'each part needs its sha256 or its crc32'),
      )
      .min(1)
      .max(100)
      .openapi({ description: 'Up to 100 parts, in any order; when one of them is past the last part or lacks its checksum, the request is refused and no URL is given' }),
  })
  .openapi('PartUrlsRequest');

export const PartUrlsSchema = z
  .object({
    parts: z.array(
      z.object({ part_number: z.number().int(), size: z.number().int(), url: z.string(), method: z.literal('PUT'), headers: z.record(z.string(), z.string()), expires_at: z.string() }),
    ),
  })
  .openapi('PartUrls');

export const CompleteUploadBody = z.object({ sha256: Sha256.openapi({ description: "The whole file's SHA-256: the manifest's" }) }).openapi('CompleteMultipartUpload');

export const CompletedUploadSchema = z
  .object({ path: z.string(), size: z.number().int(), sha256: z.string(), status: z.enum(['stored', 'present']) })
  .openapi('CompletedMultipartUpload');

export const CompletingUploadSchema = z
  .object({ path: z.string(), size: z.number().int(), sha256: z.string(), status: z.literal('completing') })
  .openapi('CompletingMultipartUpload');
