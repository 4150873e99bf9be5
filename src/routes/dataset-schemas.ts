/** Request and response schemas of the dataset routes (validation and OpenAPI from one source). */
import { z } from '@hono/zod-openapi';
import { MAX_OBJECT_BYTES } from '../objects/object-store.js';
import { CONTROL_CHARACTER_PROBLEM, isCleanLine, isCleanParagraph } from '../core/text-controls.js';

/** One line of text a person typed: a name, a label, a keyword. */
export const lineText = (max: number) => z.string().trim().max(max).refine(isCleanLine, CONTROL_CHARACTER_PROBLEM);
/** A paragraph a person typed (a description, a note): line breaks and tabs kept, other controls refused. */
export const paragraphText = (max: number) => z.string().trim().max(max).refine(isCleanParagraph, CONTROL_CHARACTER_PROBLEM);
const list = (max: number, each: number) => z.array(lineText(each).min(1)).max(max);
const ExternalId = z
  .string()
  .trim()
  .regex(/^[a-z0-9][a-z0-9_.-]*:\S{1,200}$/, 'a source and an id, such as openneuro:ds004504');

export const DatasetFieldsBody = z.object({
  name: lineText(200).min(1).optional(),
  description: paragraphText(20000).optional(),
  keywords: list(50, 100).optional(),
  license: lineText(100).min(1).nullable().optional(),
  authors: list(500, 300).optional(),
  source_repo: lineText(1000).min(1).nullable().optional(),
  external_ids: z.array(ExternalId).max(20).optional(),
});

export const CreateDatasetBody = DatasetFieldsBody.extend({
  name: lineText(200).min(1),
  visibility: z.enum(['public', 'private']).optional(),
  sandbox: z.boolean().optional(),
}).openapi('NewDataset');

export const PatchDatasetBody = DatasetFieldsBody.extend({
  visibility: z.enum(['public', 'private']).optional(),
  visibility_reason: paragraphText(2000).min(1).optional().openapi({ description: 'Why an administrator makes the dataset private (with `visibility: "private"`); mailed to its owner' }),
}).openapi('DatasetPatch');

export const DatasetSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    owner: z.string(),
    visibility: z.enum(['public', 'private']),
    sandbox: z.boolean(),
    source_repo: z.string().nullable().openapi({ description: "An https URL on a host of SOURCE_REPO_HOSTS, or the dataset's own git_url (hosted_repo); null for a dataset of uploaded versions" }),
    git_url: z.string(),
    hosted_repo: z.boolean().openapi({ description: 'true when the dataset\'s repository is the one hosted at git_url' }),
    external_ids: z.array(z.string()),
    license: z.string().nullable(),
    authors: z.array(z.string()),
    keywords: z.array(z.string()),
    modalities: z.array(z.string()),
    tasks: z.array(z.string()),
    n_subjects: z.number().int().nullable(),
    size_bytes: z.number().int(),
    latest_version: z.string().nullable(),
    doi: z.string().nullable(),
    concept_doi: z.string().nullable(),
    publication_status: z.string().nullable(),
    zarr_status: z.enum(['pending', 'converting', 'ready', 'failed']).nullable(),
    zarr_converted_at: z.string().nullable(),
    zarr_store_count: z.number().int().nullable(),
    zarr_failure_count: z.number().int().nullable().openapi({ description: 'Recordings the last conversion could not convert (their reasons: the dataset page, `nds datasets show`); `zarr_status` stays `ready` when some failed; null when not known' }),
    zarr_index_etag: z.string().nullable(),
    zarr_source_commit: z.string().nullable(),
    zarr_error: z.string().nullable().openapi({ description: 'Why the last conversion failed as a whole (`zarr_status` `failed`): the source repository refused or unreachable; null otherwise' }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Dataset');

export const DatasetPage = z.object({ datasets: z.array(DatasetSchema), next_cursor: z.string().nullable() }).openapi('DatasetPage');

export const PageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().max(200).optional(),
});

export const IdParam = z.object({ id: z.string().regex(/^(nd|sb)\d{6}$/).openapi({ param: { name: 'id', in: 'path' }, example: 'nd000001' }) });

export const FileEntry = z.object({
  path: z.string().min(1).max(1024),
  size: z.number().int().min(0).max(MAX_OBJECT_BYTES),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, '64 lower-case hex digits'),
});

export const UploadUrlsBody = z.object({ files: z.array(FileEntry).min(1).max(1000) }).openapi('UploadUrlsRequest');

export const UploadTargetSchema = z.object({
  path: z.string(),
  status: z.enum(['present', 'upload']),
  url: z.string().optional(),
  method: z.literal('PUT').optional(),
  headers: z.record(z.string(), z.string()).optional(),
  expires_at: z.string().optional(),
});

export const CredentialsSchema = z
  .object({ type: z.literal('nds-object-token'), access: z.enum(['read', 'write']), prefix: z.string(), token: z.string(), endpoint: z.string(), expires_at: z.string() })
  .openapi('ObjectCredentials');

const StorageBound = z.object({ used_bytes: z.number().int(), quota_bytes: z.number().int().nullable() });
export const StorageUseSchema = StorageBound.extend({ sandbox: StorageBound }).openapi('StorageUse');

/** A version from a manifest, or (`commit`) from a commit of the hosted repository: exactly one of the two. */
export const NewVersionBody = z
  .object({
    version: z.string().min(1).max(64),
    manifest: z.array(FileEntry).max(1_000_000).optional(),
    source_commit: z.string().regex(/^[0-9a-f]{40}$/).optional(),
    commit: z.string().regex(/^([0-9a-f]{40}|main)$/, 'a 40-hex commit id or main').optional(),
  })
  .refine((b) => (b.manifest === undefined) !== (b.commit === undefined), { message: 'give exactly one of manifest and commit', path: ['commit'] })
  .refine((b) => b.commit === undefined || b.source_commit === undefined, { message: 'source_commit goes with a manifest; a commit is its own source', path: ['source_commit'] })
  .openapi('NewVersion');

export const VersionSchema = z
  .object({ version: z.string(), created_at: z.string(), source_commit: z.string().nullable(), manifest_sha256: z.string(), file_count: z.number().int(), size_bytes: z.number().int() })
  .openapi('DatasetVersion');

export const ManifestSchema = VersionSchema.extend({ dataset_id: z.string(), files: z.array(FileEntry) }).openapi('Manifest');
