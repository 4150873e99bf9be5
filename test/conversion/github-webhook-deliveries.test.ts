/**
 * GitHub delivers a webhook as `application/json` or as `application/x-www-form-urlencoded` (`payload=<json>`,
 * GitHub's default content type). Both are signed over the body as sent. The payloads are GitHub's own
 * examples (@octokit/webhooks-examples), signed by GitHub's signing code (@octokit/webhooks-methods).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sign } from '@octokit/webhooks-methods';
import { createRequire } from 'node:module';
import type { WebhookDefinition } from '@octokit/webhooks-examples';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
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

/**
 * A signed delivery is a bearer of its own authority: anyone who saw one (a proxy log, a leaked request) could
 * send it again. Each delivery is remembered by its `X-GitHub-Delivery` id and by its body (the id is not
 * signed), so a replay dispatches nothing. Dispatches go to a local server speaking GitHub's repository
 * dispatch API, which counts them: every dispatch is one request there, with nothing to coalesce it.
 */
describe('GitHub webhook deliveries: replays', () => {
  let server: TestServer;
  let github: Server;
  let dispatches = 0;
  let failNext = false;
  /** The bodies of the dispatches answered 204, as GitHub received them. */
  const dispatched: Array<{ event_type: string; client_payload: Record<string, unknown> }> = [];

  before(async () => {
    github = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (req.method === 'POST' && req.url === '/repos/test-org/conversions/dispatches') {
        if (failNext) {
          failNext = false;
          res.writeHead(502).end();
          return;
        }
        dispatches++;
        dispatched.push(JSON.parse(Buffer.concat(chunks).toString()));
        res.writeHead(204).end();
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => github.listen(0, '127.0.0.1', resolve));
    const githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
    server = await startTestServer({
      env: { GITHUB_WEBHOOK_SECRET: SECRET, CONVERSION_DISPATCH: 'github', GITHUB_DISPATCH_REPO: 'test-org/conversions', GITHUB_TOKEN: 'test-token', GITHUB_API_URL: githubUrl },
    });
    const owner = await createAccount(server, { role: 'admin' });
    await insertDatasetRows(server.deps.db, { id: 'nd000162', name: 'Hello World', owner_id: owner.user.id, visibility: 'public', external_ids: ['github:codertocat/hello-world'] });
  });
  after(async () => {
    await server?.close();
    await new Promise((resolve) => github?.close(resolve));
  });

  let pushes = 0;
  /** One of GitHub's push examples, made a push to `main` that changed a recording (a new one each call). */
  function dataPush(): string {
    const payload = structuredClone(examplesOf('push')[0]) as Record<string, unknown>;
    pushes++;
    payload.ref = 'refs/heads/main';
    payload.after = pushes.toString(16).padStart(40, '0');
    payload.commits = [{ id: payload.after, added: [], removed: [], modified: [`sub-${pushes}/eeg/sub-${pushes}_task-rest_eeg.edf`] }];
    return JSON.stringify(payload);
  }

  async function deliver(body: string, delivery: string | undefined) {
    const res = await fetch(`${server.url}/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-hub-signature-256': await sign(SECRET, body), ...(delivery ? { 'x-github-delivery': delivery } : {}) },
      body,
    });
    return { status: res.status, body: await res.json() };
  }

  it('a replay of a delivery (same X-GitHub-Delivery) answers duplicate_delivery and dispatches nothing', async () => {
    const body = dataPush();
    const first = await deliver(body, 'f0c1a2b3-0000-11ee-8000-000000000001');
    assert.deepEqual(first, { status: 200, body: { dispatched: true, reason: 'data_changed', datasets: 1, dataset_id: 'nd000162', dataset_ids: ['nd000162'] } });
    assert.equal(dispatches, 1);
    // The runner is told the delivery's commit and to convert where main is when it starts (as a worker does).
    assert.deepEqual(dispatched.at(-1), {
      event_type: 'generate-zarr',
      client_payload: { dataset_id: 'nd000162', ref: JSON.parse(body).after, full: false, reason: 'push', follow_main: true, callback_url: `${server.config.publicUrl}/webhooks/zarr-ready` },
    });
    const replay = await deliver(body, 'f0c1a2b3-0000-11ee-8000-000000000001');
    assert.deepEqual(replay, { status: 200, body: { dispatched: false, reason: 'duplicate_delivery' } });
    assert.equal(dispatches, 1);
  });

  it('many concurrent replays of one delivery dispatch exactly once', async () => {
    const body = dataPush();
    const before = dispatches;
    const answers = await Promise.all(Array.from({ length: 20 }, () => deliver(body, 'f0c1a2b3-0000-11ee-8000-000000000002')));
    assert.ok(answers.every((a) => a.status === 200));
    assert.equal(answers.filter((a) => a.body.dispatched === true).length, 1);
    assert.equal(answers.filter((a) => a.body.reason === 'duplicate_delivery').length, 19);
    assert.equal(dispatches, before + 1);
  });

  it('the same signed body under another delivery id, or none, is a replay too (the id is not signed)', async () => {
    const body = dataPush();
    const before = dispatches;
    assert.equal((await deliver(body, 'f0c1a2b3-0000-11ee-8000-000000000003')).body.dispatched, true);
    assert.deepEqual((await deliver(body, 'f0c1a2b3-0000-11ee-8000-00000000ffff')).body, { dispatched: false, reason: 'duplicate_delivery' });
    assert.deepEqual((await deliver(body, undefined)).body, { dispatched: false, reason: 'duplicate_delivery' });
    assert.equal(dispatches, before + 1);
    // A new push under a new id still dispatches.
    assert.equal((await deliver(dataPush(), 'f0c1a2b3-0000-11ee-8000-000000000004')).body.dispatched, true);
    assert.equal(dispatches, before + 2);
  });

  it('a delivery whose dispatch failed is not remembered: GitHub\'s redelivery of it dispatches', async () => {
    const body = dataPush();
    const before = dispatches;
    failNext = true;
    const failed = await deliver(body, 'f0c1a2b3-0000-11ee-8000-000000000005');
    assert.equal(failed.status, 502);
    assert.equal(failed.body.error, 'upstream_failed');
    const redelivered = await deliver(body, 'f0c1a2b3-0000-11ee-8000-000000000005');
    assert.equal(redelivered.body.dispatched, true);
    assert.equal(dispatches, before + 1);
  });

  it('remembers a delivery for three days, then forgets it', async () => {
    const body = dataPush();
    assert.equal((await deliver(body, 'f0c1a2b3-0000-11ee-8000-000000000006')).body.dispatched, true);
    server.clock.advance(3 * 86_400_000 - 60_000);
    assert.equal((await deliver(body, 'f0c1a2b3-0000-11ee-8000-000000000006')).body.reason, 'duplicate_delivery', 'still remembered after a day and more');
    server.clock.advance(2 * 60_000);
    // The next delivery prunes what is past the retention: the table does not grow without end.
    await deliver(dataPush(), 'f0c1a2b3-0000-11ee-8000-000000000007');
    const kept = await server.deps.db.selectFrom('github_deliveries').select('delivery_id').execute();
    assert.deepEqual(kept.map((r) => r.delivery_id), ['f0c1a2b3-0000-11ee-8000-000000000007']);
  });
});
