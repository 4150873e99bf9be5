/** Routes that move a dataset's content: upload URLs, scoped credentials, versions and manifests. */
import { signInOf } from '../accounts/sign-in-of-credential.js';
import { z } from '@hono/zod-openapi';
import { convertNewVersion } from '../conversion/convert-new-version.js';
import { uploadableDataset, visibleDataset } from '../datasets/dataset-access.js';
import { objectCredentials, uploadUrls } from '../datasets/uploads.js';
import { createVersionFromCommit, repositoryHeldElsewhere } from '../datasets/version-from-commit.js';
import { forwardToHolder } from '../http/holder-forwarding.js';
import { createVersion, findVersion, listVersions, presentVersion, readManifest } from '../datasets/versions.js';
import { callerOf } from '../http/auth.js';
import { jsonResponse } from '../http/openapi-helpers.js';
import { route, type Route } from '../http/route.js';
import { DATASET_PATH } from '../http/paths.js';
import { CredentialsSchema, IdParam, ManifestSchema, NewVersionBody, UploadTargetSchema, UploadUrlsBody, VersionSchema } from './dataset-schemas.js';

export const contentRoutes: Route[] = [
  route({
    method: 'post',
    path: `${DATASET_PATH}/upload-urls`,
    summary: 'Presigned PUT URLs (1 hour) for content-addressed uploads; content already stored is answered "present"',
    access: 'any',
    params: IdParam,
    // Up to 1,000 files of three fields each.
    body: { schema: UploadUrlsBody, maxBytes: 2 * 1024 * 1024, maxKeys: 5_000 },
    responses: { 200: jsonResponse(z.object({ files: z.array(UploadTargetSchema) }), 'One answer a file, in order') },
    handler: async (c, { params, body }) => {
      const dataset = await uploadableDataset(c.var.deps.db, params.id, callerOf(c).user);
      return c.json({ files: await uploadUrls(c.var.deps, dataset.id, body.files) }, 200);
    },
  }),

  route({
    method: 'post',
    path: `${DATASET_PATH}/upload-credentials`,
    summary: 'Temporary write credentials scoped to <id>/objects/ (owner or admin)',
    access: 'any',
    params: IdParam,
    responses: { 200: jsonResponse(CredentialsSchema, 'Credentials') },
    handler: async (c, { params }) => {
      const dataset = await uploadableDataset(c.var.deps.db, params.id, callerOf(c).user);
      return c.json(objectCredentials(c.var.deps, dataset.id, 'write', callerOf(c).user.id, signInOf(c.var.caller)), 200);
    },
  }),

  route({
    method: 'post',
    path: `${DATASET_PATH}/download-credentials`,
    summary: 'Temporary read credentials scoped to <id>/ (anyone for a public dataset; owner or admin otherwise)',
    access: 'optional',
    params: IdParam,
    responses: { 200: jsonResponse(CredentialsSchema, 'Credentials') },
    handler: async (c, { params }) => {
      const dataset = await visibleDataset(c.var.deps.db, params.id, c.var.caller?.user);
      return c.json(objectCredentials(c.var.deps, dataset.id, 'read', c.var.caller?.user.id ?? null, signInOf(c.var.caller)), 200);
    },
  }),

  route({
    method: 'post',
    path: `${DATASET_PATH}/versions`,
    summary: 'Create an immutable version from a manifest whose content is all stored, or from a commit of the hosted repository (owner or admin)',
    access: 'any',
    params: IdParam,
    // A manifest lists up to a million files (about 170 MB of JSON): the version route's declared size.
    body: { schema: NewVersionBody, maxBytes: 256 * 1024 * 1024, maxKeys: 5_000_000 },
    responses: { 201: jsonResponse(VersionSchema, 'Created') },
    handler: async (c, { params, body }) => {
      const user = callerOf(c).user;
      const dataset = await uploadableDataset(c.var.deps.db, params.id, user);
      // A commit is read from the repository's own disk: the node that holds it makes the version.
      const holder = body.commit ? await repositoryHeldElsewhere(c.var.deps, dataset.id) : undefined;
      if (holder) return forwardToHolder(c, dataset.id, holder, body);
      const row = body.commit
        ? await createVersionFromCommit(c.var.deps, dataset.id, { version: body.version, commit: body.commit, createdBy: user.id, madeBy: user })
        : await createVersion(c.var.deps, dataset.id, { version: body.version, manifest: body.manifest ?? [], sourceCommit: body.source_commit, createdBy: user.id, madeBy: user });
      await convertNewVersion(c.var.deps, dataset, row.version);
      return c.json(presentVersion(row), 201);
    },
  }),

  route({
    method: 'get',
    path: `${DATASET_PATH}/versions`,
    summary: 'List versions, highest first',
    access: 'optional',
    params: IdParam,
    responses: { 200: jsonResponse(z.object({ dataset_id: z.string(), versions: z.array(VersionSchema) }), 'Versions') },
    handler: async (c, { params }) => {
      const dataset = await visibleDataset(c.var.deps.db, params.id, c.var.caller?.user);
      const rows = await listVersions(c.var.deps.db, dataset.id);
      return c.json({ dataset_id: dataset.id, versions: rows.map(presentVersion) }, 200);
    },
  }),

  route({
    method: 'get',
    path: `${DATASET_PATH}/manifest`,
    summary: 'The manifest of the latest version, or of ?version=',
    access: 'optional',
    params: IdParam,
    query: z.object({ version: z.string().max(64).optional() }),
    responses: { 200: jsonResponse(ManifestSchema, 'Manifest') },
    handler: async (c, { params, query }) => {
      const dataset = await visibleDataset(c.var.deps.db, params.id, c.var.caller?.user);
      const row = await findVersion(c.var.deps.db, dataset.id, query.version);
      const files = await readManifest(c.var.deps, row);
      return c.json({ dataset_id: dataset.id, ...presentVersion(row), files }, 200);
    },
  }),
];
