/**
 * The owner's actions besides uploading, through the CLI: edit metadata, request publication and follow it,
 * ask for upload access; an administrator's takedown with a reason, which the owner gets by mail; and what the
 * CLI says when the server refuses the configured key.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { nds } from '../support/cli.js';
import { mailsTo } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from '../datasets/support.js';
import { addVersion } from '../support/versions.js';
import { writeCredentials } from '../../src/cli/credentials.js';

describe('nds datasets edit, publish, and auth request-access', () => {
  let server: TestServer;
  let owner: TestAccount;
  let tmp: string;
  let env: Record<string, string>;
  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-edit-'));
    env = { NDS_API_URL: server.url, NDS_API_KEY: owner.key, XDG_CONFIG_HOME: tmp };
  });
  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('edits metadata, then requests publication and shows its status', async () => {
    const id = (await nds(['datasets', 'create', 'Draft name'], env)).stdout.trim();
    const refused = await nds(['datasets', 'publish', 'request', id], env);
    assert.equal(refused.code, 1);

    const edit = await nds(['datasets', 'edit', id, '--name', 'Resting EEG', '--description', 'Eyes closed, 64 channels', '--license', 'CC0-1.0', '--author', 'Ada Lovelace', '--json'], env);
    assert.equal(edit.code, 0, edit.stderr);
    const edited = JSON.parse(edit.stdout);
    assert.deepEqual([edited.name, edited.description, edited.license, edited.authors], ['Resting EEG', 'Eyes closed, 64 channels', 'CC0-1.0', ['Ada Lovelace']]);
    const nothing = await nds(['datasets', 'edit', id], env);
    assert.match(nothing.stderr, /nothing to change/);
    const visibility = await nds(['datasets', 'edit', id, '--visibility', 'public'], env);
    assert.equal(visibility.code, 1, 'an owner cannot make a dataset public by an edit');

    // A version to publish.
    const bytes = Buffer.from('participant_id\nsub-01\n');
    const sha = (await import('node:crypto')).createHash('sha256').update(bytes).digest('hex');
    const { files } = await json(await owner.api(`/datasets/${id}/upload-urls`, { method: 'POST', body: JSON.stringify({ files: [{ path: 'participants.tsv', size: bytes.length, sha256: sha }] }) }), 200);
    await fetch(files[0].url, { method: 'PUT', headers: files[0].headers, body: bytes });
    await json(await owner.api(`/datasets/${id}/versions`, { method: 'POST', body: JSON.stringify({ version: '1.0.0', manifest: [{ path: 'participants.tsv', size: bytes.length, sha256: sha }] }) }), 201);

    const request = await nds(['datasets', 'publish', 'request', id, '--message', 'ready'], env);
    assert.equal(request.code, 0, request.stderr);
    assert.match(request.stdout, new RegExp(`^request \\d+ for ${id} v1\\.0\\.0: pending$`, 'm'));
    const status = await nds(['datasets', 'publish', 'status', id], env);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /^visibility {3}private$/m);
    assert.match(status.stdout, /^request \d+ {2}v1\.0\.0 {2}pending/m);
  });

  it("makes a dataset private with --reason, which the owner gets by mail; refuses --reason without it, sending nothing", async () => {
    const admin = await createAccount(server, { role: 'admin' });
    const adminEnv = { ...env, NDS_API_KEY: admin.key };
    const { id } = await json(await owner.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Published pilot', authors: ['Ada Lovelace'], license: 'CC0-1.0', description: 'Eyes closed.' }) }), 201);
    await addVersion(server, owner, id, '1.0.0');
    const { id: requestId } = await json(await owner.api(`/datasets/${id}/publish/request`, { method: 'POST' }), 201);
    await json(await admin.api(`/admin/publish/${requestId}/approve`, { method: 'POST' }), 200);

    const alone = await nds(['datasets', 'edit', id, '--name', 'Renamed pilot', '--reason', 'Because.'], adminEnv);
    assert.equal(alone.code, 1);
    assert.match(alone.stderr, /--reason says why a dataset is made private: give it with --visibility private/);
    const row = await server.deps.db.selectFrom('datasets').select(['name', 'visibility']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { name: 'Published pilot', visibility: 'public' }, 'nothing was changed');

    const reason = 'The consent forms do not cover public sharing.\nAsk the ethics board, then request again.';
    const takedown = await nds(['datasets', 'edit', id, '--visibility', 'private', '--reason', reason], adminEnv);
    assert.equal(takedown.code, 0, takedown.stderr);
    assert.equal((await server.deps.db.selectFrom('datasets').select('visibility').where('id', '=', id).executeTakeFirstOrThrow()).visibility, 'private');
    const mails = (await mailsTo(server.dataDir, owner.user.email)).filter((m) => m.subject === `nds: an administrator made ${id} private`);
    assert.equal(mails.length, 1);
    assert.match(mails[0]!.text, /Their reason:\n\n {4}The consent forms do not cover public sharing\.\n {4}Ask the ethics board, then request again\./);
  });

  it('asks for upload access', async () => {
    const member = await createAccount(server);
    const r = await nds(['auth', 'request-access'], { ...env, NDS_API_KEY: member.key });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /upload access requested for /);
    const row = await server.deps.db.selectFrom('users').select('upload_access_requested_at').where('id', '=', member.user.id).executeTakeFirstOrThrow();
    assert.ok(row.upload_access_requested_at);
  });

  it('names where a refused key came from and suggests a sign-in command that runs (npx nds auth login: no nds on PATH)', async () => {
    const fromEnv = await nds(['datasets', 'list', '--mine'], { ...env, NDS_API_KEY: 'nds_wrong' });
    assert.equal(fromEnv.code, 1);
    assert.match(fromEnv.stderr, /refused the API key from the NDS_API_KEY environment variable .*Run `npx nds auth login`.*unset NDS_API_KEY/);

    const config = path.join(tmp, 'cfg');
    await writeCredentials(path.join(config, 'nds', 'credentials.json'), { api_url: server.url, api_key: 'nds_wrong', saved_at: new Date().toISOString() });
    const fromFile = await nds(['datasets', 'list', '--mine'], { NDS_API_URL: server.url, XDG_CONFIG_HOME: config });
    assert.equal(fromFile.code, 1);
    assert.match(fromFile.stderr, /refused the API key from the credentials file .*credentials\.json .*Run `npx nds auth login` to sign in again\./);
  });
});
