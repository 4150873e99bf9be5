/**
 * Every action a user or an administrator takes through the API has an `nds` command. The test walks
 * `/openapi.json` and fails on a route that is neither mapped to a command below nor exempt with a reason
 * (browser-only flows, machine-to-machine calls, probes). A new route therefore needs a command, or a line
 * here saying why it has none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** `METHOD /openapi/path` → the command (its words after `nds`) that makes that call. */
export const commandOfRoute: Record<string, string> = {
  'GET /auth/keys': 'auth keys list',
  'POST /auth/keys': 'auth keys create',
  'DELETE /auth/keys/current': 'auth logout',
  'DELETE /auth/keys/{id}': 'auth keys revoke',
  'POST /auth/login': 'auth status',
  'GET /users/me': 'auth status',
  'GET /users/me/storage': 'auth status',
  'POST /users/me/upload-access': 'auth request-access',
  'POST /auth/device/start': 'auth login',
  'POST /auth/device/token': 'auth login',
  'POST /auth/signup': 'auth signup',
  'GET /admin/users': 'admin users list',
  'GET /admin/users/{username}': 'admin users show',
  'POST /admin/approve/{username}': 'admin users approve',
  'POST /admin/deny/{username}': 'admin users deny',
  'POST /admin/revoke/{username}': 'admin users revoke',
  'POST /admin/users/{username}/kind': 'admin users kind',
  'GET /admin/users/{username}/storage': 'admin users quota',
  'POST /admin/users/{username}/storage-quota': 'admin users quota',
  'POST /admin/users/{username}/keys': 'admin keys create',
  'GET /admin/users/{username}/keys': 'admin keys list',
  'DELETE /admin/users/{username}/keys/{id}': 'admin keys revoke',
  'GET /admin/audit': 'admin audit',
  'GET /datasets/search': 'datasets search',
  'POST /datasets': 'datasets create',
  'GET /datasets': 'datasets list',
  'GET /users/me/datasets': 'datasets list',
  'GET /datasets/resolve/{sourceId}': 'datasets resolve',
  'GET /datasets/{id}': 'datasets show',
  'GET /datasets/{id}/recordings': 'datasets show',
  'GET /recordings': 'recordings list',
  'GET /datasets/{id}/signal': 'signal get',
  'GET /datasets/{id}/events': 'signal events',
  'POST /windows': 'windows export',
  'PATCH /datasets/{id}': 'datasets edit',
  'DELETE /admin/datasets/{id}': 'admin datasets delete',
  'POST /datasets/{id}/upload-urls': 'datasets upload',
  'GET /datasets/{id}/multipart-uploads': 'datasets upload',
  'POST /datasets/{id}/multipart-uploads': 'datasets upload',
  'GET /datasets/{id}/multipart-uploads/{upload_id}': 'datasets upload',
  'POST /datasets/{id}/multipart-uploads/{upload_id}/part-urls': 'datasets upload',
  'POST /datasets/{id}/multipart-uploads/{upload_id}/complete': 'datasets upload',
  'DELETE /datasets/{id}/multipart-uploads/{upload_id}': 'datasets upload',
  'POST /datasets/{id}/download-credentials': 'datasets download',
  'POST /datasets/{id}/versions': 'datasets upload',
  'GET /datasets/{id}/versions': 'datasets versions',
  'GET /datasets/{id}/manifest': 'datasets manifest',
  'POST /datasets/{id}/publish/request': 'datasets publish request',
  'GET /datasets/{id}/publish/status': 'datasets publish status',
  'GET /admin/publish/requests': 'admin publish list',
  'POST /admin/publish/{id}/approve': 'admin publish approve',
  'POST /admin/publish/{id}/deny': 'admin publish deny',
  'GET /admin/datasets/{id}/doi': 'admin doi show',
  'POST /admin/datasets/{id}/doi/concept': 'admin doi concept',
  'POST /admin/datasets/{id}/doi/update': 'admin doi update',
  'GET /sandbox/status': 'sandbox status',
  'POST /sandbox/complete': 'sandbox complete',
  'POST /sandbox/reset': 'sandbox reset',
  'POST /admin/datasets/{id}/zarr/regenerate': 'admin zarr regenerate',
  'GET /admin/datasets/{id}/zarr': 'admin zarr status',
  'GET /admin/zarr/datasets': 'admin zarr backfill',
  'GET /datasets/{id}/members': 'datasets members list',
  'PUT /datasets/{id}/members/{username}': 'datasets members add',
  'DELETE /datasets/{id}/members/{username}': 'datasets members remove',
  'GET /datasets/{id}/annotations': 'datasets annotations list',
  'POST /datasets/{id}/annotations': 'datasets annotations import',
  'GET /datasets/{id}/annotations/history': 'datasets annotations history',
  'GET /datasets/{id}/annotations/export': 'datasets annotations export',
  'GET /datasets/{id}/annotations/labels': 'datasets annotations labels',
  'POST /datasets/{id}/annotations/commit': 'datasets annotations commit',
};

/** Routes with no command, and why. */
export const exemptRoutes: Record<string, string> = {
  'GET /healthz': 'a probe for load balancers and monitoring',
  'GET /readyz': 'a probe for load balancers and monitoring',
  'POST /auth/code/request': 'browser sign-in by emailed code (the terminal signs in by the device flow)',
  'POST /auth/code/verify': 'browser sign-in by emailed code (the terminal signs in by the device flow)',
  'POST /auth/password/login': 'browser sign-in by password (the terminal signs in by the device flow)',
  'POST /auth/logout': 'ends a browser session (`nds auth logout` revokes the terminal\'s key)',
  'GET /auth/device/lookup': 'the device approval page in the browser',
  'POST /auth/device/confirm': 'the device approval page in the browser',
  'POST /auth/device/deny': 'the device approval page in the browser',
  'POST /auth/resend-verification': 'the sign-up page in the browser',
  'POST /auth/retrieve-key': 'deprecated: clients from before the device flow',
  'POST /auth/request-key-regeneration': 'a link sent by email, opened in the browser',
  'GET /auth/confirm-key-regeneration': 'a link sent by email, opened in the browser',
  'POST /auth/confirm-key-regeneration': "the button of the mailed link's page in the browser",
  'POST /datasets/{id}/upload-credentials': 'S3 credentials for third-party tools (aws s3, rclone); `nds datasets upload` uses upload-urls',
  'POST /webhooks/github': 'machine to machine: GitHub push events',
  'POST /webhooks/zarr-ready': 'machine to machine: a conversion runner reports a finished copy',
  'GET /.well-known/oauth-authorization-server': 'OAuth client libraries discover the device flow from it (RFC 8414); `nds auth login` knows its routes',
  'PATCH /datasets/{id}/annotations/{annotationId}': "one annotation is changed in place in the viewer's annotation mode; imports replace in bulk (`nds datasets annotations import`)",
  'DELETE /datasets/{id}/annotations/{annotationId}': "one annotation is deleted in place in the viewer's annotation mode",
  'POST /datasets/{id}/read-grant': 'the browser viewer of a private dataset reads the gateway with it (a key reads the API directly)',
};

function commandExists(program: Command, words: string): boolean {
  let current: Command | undefined = program;
  for (const word of words.split(' ')) {
    current = current?.commands.find((c) => c.name() === word);
    if (!current) return false;
  }
  return current !== undefined;
}

describe('every user and admin action of the API has an nds command', () => {
  let server: TestServer;
  let operations: string[];
  before(async () => {
    server = await startTestServer();
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    operations = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
  });
  after(() => server?.close());

  it('maps each documented route to a command or an exemption with its reason', () => {
    const unmapped = operations.filter((op) => !(op in commandOfRoute) && !(op in exemptRoutes));
    assert.deepEqual(unmapped, [], `routes without an nds command: add one, or an exemption saying why:\n${unmapped.join('\n')}`);
    const both = operations.filter((op) => op in commandOfRoute && op in exemptRoutes);
    assert.deepEqual(both, []);
  });

  it('names commands that exist, and routes that exist', () => {
    const program = buildProgram();
    const missing = Object.entries(commandOfRoute).filter(([, words]) => !commandExists(program, words));
    assert.deepEqual(missing, [], 'commands named in the table that nds does not have');
    const documented = new Set(operations);
    const stale = [...Object.keys(commandOfRoute), ...Object.keys(exemptRoutes)].filter((op) => !documented.has(op));
    assert.deepEqual(stale, [], 'table lines for routes the API no longer has');
  });
});
