/** Routes that move a dataset's content: upload URLs, scoped credentials, versions and manifests. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/app-env.js';
import { authenticate, callerOf } from '../http/auth.js';
import { bearerSecurity, errorResponses, jsonBody, jsonResponse } from '../http/openapi-helpers.js';
import { createRouter } from '../http/router.js';
import { uploadableDataset, visibleDataset } from '../datasets/dataset-access.js';
import { CredentialsSchema, ID_PATH, IdParam, ManifestSchema, NewVersionBody, UploadTargetSchema, UploadUrlsBody, VersionSchema, tidyDocumentedPaths } from './dataset-schemas.js';
import { objectCredentials, uploadUrls } from '../datasets/uploads.js';
import { convertNewVersion } from '../conversion/convert-new-version.js';
import { createVersionFromCommit } from '../datasets/version-from-commit.js';
import { createVersion, findVersion, listVersions, presentVersion, readManifest } from '../datasets/versions.js';

const base = `/datasets/${ID_PATH}`;

const routes = {
  uploadUrls: createRoute({
    method: 'post',
    path: `${base}/upload-urls`,
    summary: 'Presigned PUT URLs (1 hour) for content-addressed uploads; content already stored is answered "present"',
    security: bearerSecurity,
    middleware: [authenticate('any')],
    request: { params: IdParam, ...jsonBody(UploadUrlsBody) },
    responses: { 200: jsonResponse(z.object({ files: z.array(UploadTargetSchema) }), 'One answer a file, in order'), ...errorResponses },
  }),
  uploadCredentials: createRoute({
    method: 'post',
    path: `${base}/upload-credentials`,
    summary: 'Temporary write credentials scoped to <id>/objects/ (owner or admin)',
    security: bearerSecurity,
    middleware: [authenticate('any')],
    request: { params: IdParam },
    responses: { 200: jsonResponse(CredentialsSchema, 'Credentials'), ...errorResponses },
  }),
  downloadCredentials: createRoute({
    method: 'post',
    path: `${base}/download-credentials`,
    summary: 'Temporary read credentials scoped to <id>/ (anyone for a public dataset; owner or admin otherwise)',
    middleware: [authenticate('optional')],
    request: { params: IdParam },
    responses: { 200: jsonResponse(CredentialsSchema, 'Credentials'), 404: errorResponses[404] },
  }),
  createVersion: createRoute({
    method: 'post',
    path: `${base}/versions`,
    summary: 'Create an immutable version from a manifest whose content is all stored, or from a commit of the hosted repository (owner or admin)',
    security: bearerSecurity,
    middleware: [authenticate('any')],
    request: { params: IdParam, ...jsonBody(NewVersionBody) },
    responses: { 201: jsonResponse(VersionSchema, 'Created'), ...errorResponses },
  }),
  versions: createRoute({
    method: 'get',
    path: `${base}/versions`,
    summary: 'List versions, highest first',
    middleware: [authenticate('optional')],
    request: { params: IdParam },
    responses: { 200: jsonResponse(z.object({ dataset_id: z.string(), versions: z.array(VersionSchema) }), 'Versions'), 404: errorResponses[404] },
  }),
  manifest: createRoute({
    method: 'get',
    path: `${base}/manifest`,
    summary: 'The manifest of the latest version, or of ?version=',
    middleware: [authenticate('optional')],
    request: { params: IdParam, query: z.object({ version: z.string().max(64).optional() }) },
    responses: { 200: jsonResponse(ManifestSchema, 'Manifest'), 404: errorResponses[404] },
  }),
};

export function contentRoutes(): OpenAPIHono<AppEnv> {
  const app = createRouter();

  app.openapi(routes.uploadUrls, async (c) => {
    const dataset = await uploadableDataset(c.var.deps.db, c.req.valid('param').id, callerOf(c).user);
    return c.json({ files: await uploadUrls(c.var.deps, dataset.id, c.req.valid('json').files) }, 200);
  });

  app.openapi(routes.uploadCredentials, async (c) => {
    const dataset = await uploadableDataset(c.var.deps.db, c.req.valid('param').id, callerOf(c).user);
    return c.json(objectCredentials(c.var.deps, dataset.id, 'write'), 200);
  });

  app.openapi(routes.downloadCredentials, async (c) => {
    const dataset = await visibleDataset(c.var.deps.db, c.req.valid('param').id, c.var.caller?.user);
    return c.json(objectCredentials(c.var.deps, dataset.id, 'read'), 200);
  });

  app.openapi(routes.createVersion, async (c) => {
    const user = callerOf(c).user;
    const dataset = await uploadableDataset(c.var.deps.db, c.req.valid('param').id, user);
    const body = c.req.valid('json');
    const row = body.commit
      ? await createVersionFromCommit(c.var.deps, dataset.id, { version: body.version, commit: body.commit, createdBy: user.id })
      : await createVersion(c.var.deps, dataset.id, { version: body.version, manifest: body.manifest ?? [], sourceCommit: body.source_commit, createdBy: user.id });
    await convertNewVersion(c.var.deps, dataset, row.version);
    return c.json(presentVersion(row), 201);
  });

  app.openapi(routes.versions, async (c) => {
    const dataset = await visibleDataset(c.var.deps.db, c.req.valid('param').id, c.var.caller?.user);
    const rows = await listVersions(c.var.deps.db, dataset.id);
    return c.json({ dataset_id: dataset.id, versions: rows.map(presentVersion) }, 200);
  });

  app.openapi(routes.manifest, async (c) => {
    const dataset = await visibleDataset(c.var.deps.db, c.req.valid('param').id, c.var.caller?.user);
    const row = await findVersion(c.var.deps.db, dataset.id, c.req.valid('query').version);
    const files = await readManifest(c.var.deps, row);
    return c.json({ dataset_id: dataset.id, ...presentVersion(row), files }, 200);
  });

  tidyDocumentedPaths(app);
  return app;
}
