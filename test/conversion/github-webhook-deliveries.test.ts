/**
 * GitHub delivers a webhook as `application/json` or as `application/x-www-form-urlencoded` (`payload=<json>`,
 * GitHub's default content type). Both are signed over the body as sent. The payloads are GitHub's own
 * examples (@octokit/webhooks-examples), signed by GitHub's signing code (@octokit/webhooks-methods).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sign } from '@octokit/webhooks-methods';
import { createRequire } from 'node:module';
import type { WebhookDefinition } from '@octokit/webhooks-examples';
import { createAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const SECRET = 'gh-form-secret';
// The package is one JSON file (its typings describe a default export that a CommonJS JSON module lacks).
const examples = createRequire(import.meta.url)('@octokit/webhooks-examples') as WebhookDefinition[];

function examplesOf(event: string): unknown[] {
  const found = examples.find((d) => d.name === event);
  assert.ok(found, `no ${event} examples`);
  return found.examples as unknown[];
}

describe('GitHub webhook deliveries: JSON and form-encoded', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { GITHUB_WEBHOOK_SECRET: SECRET } });
    const owner = await createAccount(server, { role: 'admin' });
    // The examples' repository is a known dataset, so that the push rule reads the payload to the end.
    await server.deps.db
      .insertInto('datasets')
      .values({ id: 'nd000161', name: 'Hello World', owner_id: owner.user.id, visibility: 'public', source_repo: null, external_ids: ['github:codertocat/hello-world'], latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: null, zarr_converted_at: null, zarr_store_count: null, zarr_index_etag: null, zarr_source_commit: null })
      .execute();
  });
  after(() => server.close());

  async function deliver(event: string, body: string, contentType: string, signature?: string) {
    const res = await fetch(`${server.url}/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': contentType, 'x-github-event': event, 'x-hub-signature-256': signature ?? (await sign(SECRET, body)) },
      body,
    });
    return { status: res.status, body: await res.json() };
  }
  const asJson = (payload: unknown) => JSON.stringify(payload);
  const asForm = (payload: unknown) => new URLSearchParams({ payload: JSON.stringify(payload) }).toString();

  it('every push example gets the same decision delivered as JSON and as a form', async () => {
    const pushes = examplesOf('push');
    assert.ok(pushes.length >= 5);
    for (const payload of pushes) {
      const json = await deliver('push', asJson(payload), 'application/json');
      const form = await deliver('push', asForm(payload), 'application/x-www-form-urlencoded');
      assert.equal(json.status, 200, JSON.stringify(json.body));
      assert.equal(form.status, 200, JSON.stringify(form.body));
      // Tags and `master` of Codertocat/Hello-World, a known repository: not `main`, nothing dispatched.
      assert.deepEqual(json.body, { dispatched: false, reason: 'not_main_branch' });
      assert.deepEqual(form.body, json.body);
    }
  });

  it('ping and other events, form-encoded', async () => {
    for (const payload of examplesOf('ping')) {
      assert.deepEqual((await deliver('ping', asForm(payload), 'application/x-www-form-urlencoded')).body, { dispatched: false, reason: 'ping' });
    }
    const issue = examplesOf('issues')[0];
    assert.deepEqual((await deliver('issues', asForm(issue), 'application/x-www-form-urlencoded')).body, { dispatched: false, reason: 'not_a_push' });
  });

  it('the signature covers the form body as sent, not the JSON inside it', async () => {
    const payload = examplesOf('push')[0];
    const form = asForm(payload);
    const overJson = await deliver('push', form, 'application/x-www-form-urlencoded', await sign(SECRET, asJson(payload)));
    assert.equal(overJson.status, 401);
    assert.equal(overJson.body.error, 'unauthorized');
    const tampered = form.replace('simple-tag', 'simple-tab');
    assert.notEqual(tampered, form);
    const bad = await deliver('push', tampered, 'application/x-www-form-urlencoded', await sign(SECRET, form));
    assert.equal(bad.status, 401);
  });

  it('a form without a payload field, or with one that is not JSON, is a clear 400', async () => {
    const none = await deliver('push', 'other=1', 'application/x-www-form-urlencoded');
    assert.equal(none.status, 400);
    assert.equal(none.body.error, 'validation_failed');
    assert.deepEqual(none.body.details, ['payload: required form field (the JSON payload)']);
    const broken = await deliver('push', 'payload=%7Bnot-json', 'application/x-www-form-urlencoded');
    assert.equal(broken.status, 400);
    assert.deepEqual(broken.body.details, ['payload: not JSON']);
  });

  it('other content types are refused with 415', async () => {
    const res = await deliver('push', asJson(examplesOf('push')[0]), 'text/plain');
    assert.equal(res.status, 415);
    assert.equal(res.body.error, 'unsupported_media_type');
  });
});
