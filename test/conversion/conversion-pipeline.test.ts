import assert from 'node:assert/strict';
import { rmSync, writeFileSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, hostedSource, hostRepository, makeBidsRepo, pushPayload, readObject, signGithub } from './support.js';

const SECRET = 'gh-secret';
const TOKEN = 'zarr-ready-token';


describe('conversion pipeline: push webhook → job → stores → index.json → zarr-ready', () => {
  let server: TestServer;
  let admin: TestAccount;
  let repo: string;
  const purged: Array<{ dataset: string; paths: string[] }> = [];
  const id = 'nd000101';

  before(async () => {
    server = await startTestServer({ env: { GITHUB_WEBHOOK_SECRET: SECRET, SERVICE_WEBHOOK_TOKEN: TOKEN } });
    server.deps.hooks.zarrChanged.push((dataset, paths) => void purged.push({ dataset, paths }));
    admin = await createAccount(server, { role: 'admin' });
    repo = hostRepository(server.config.gitDir, id, makeBidsRepo());
    await insertDatasetRows(server.deps.db, { id, name: 'Pipeline test', owner_id: admin.user.id, visibility: 'public', source_repo: hostedSource, external_ids: ['github:test-org/ds-pipeline'] });
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
  });

  async function push(payload: unknown, event = 'push', secret = SECRET) {
    const body = JSON.stringify(payload);
    return fetch(`${server.url}/webhooks/github`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-github-event': event, 'x-hub-signature-256': signGithub(secret, body) },
      body,
    });
  }

  async function dataset() {
    return server.deps.db.selectFrom('datasets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  }

  it('a push to main that touched a data file converts every recording and records the copy', async () => {
    const head = gitIn(repo, 'rev-parse', 'HEAD');
    const res = await push(pushPayload('test-org/ds-pipeline', head, { added: ['sub-01/emg/sub-01_task-holdWeight_emg.edf'] }));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { dispatched: true, reason: 'data_changed', datasets: 1, dataset_id: id, dataset_ids: [id] });
    assert.equal((await dataset()).zarr_status, 'pending');
    await server.worker!.idle();

    const d = await dataset();
    assert.equal(d.zarr_status, 'ready');
    assert.equal(d.zarr_source_commit, head);
    assert.equal(d.zarr_store_count, 2);
    assert.ok(d.zarr_converted_at);
    const index = JSON.parse((await readObject(server, `${id}/zarr/index.json`))!);
    assert.equal(index.format, 'nds-zarr-index');
    assert.equal(index.source_commit, head);
    assert.equal(index.store_count, 2);
    assert.equal(index.discovered_count, index.store_count + index.failure_count);
    assert.deepEqual(index.stores.map((s: { zarr: string }) => s.zarr).sort(), ['sub-01/emg/sub-01_task-holdWeight_emg.zarr', 'sub-02/eeg/sub-02_task-rest_eeg.zarr']);
    assert.equal(d.zarr_index_etag, (await server.deps.objects.head(`${id}/zarr/index.json`))!.etag);
    const root = JSON.parse((await readObject(server, `${id}/zarr/sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json`))!);
    assert.equal(root.node_type, 'group');
    assert.equal(root.attributes.source.commit, head);
    // The callback asked for index.json and each converted store's zarr.json to be purged.
    const last = purged.at(-1)!;
    assert.equal(last.dataset, id);
    assert.deepEqual(last.paths.sort(), ['index.json', 'sub-01/emg/sub-01_task-holdWeight_emg.zarr/zarr.json', 'sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json']);
  });

  it('a later push converts only the recording whose sidecar changed, and deletes the store of a removed one', async () => {
    writeFileSync(path.join(repo, 'sub-02/eeg/sub-02_task-rest_events.tsv'), 'onset\tduration\ttrial_type\n1.5\t0\tblink\n2.5\t0\tsaccade\n');
    gitIn(repo, 'commit', '-qam', 'more events');
    const second = gitIn(repo, 'rev-parse', 'HEAD');
    await push(pushPayload('test-org/ds-pipeline', second, { modified: ['sub-02/eeg/sub-02_task-rest_events.tsv'] }));
    await server.worker!.idle();
    const jobs = await server.deps.db.selectFrom('conversion_jobs').selectAll().where('dataset_id', '=', id).orderBy('id', 'desc').execute();
    assert.equal(jobs[0].state, 'done');
    const result = jobs[0].result as unknown as { converted: string[]; unchanged: number };
    assert.deepEqual(result.converted, ['sub-02/eeg/sub-02_task-rest_eeg.zarr']);
    assert.equal(result.unchanged, 1);
    const index = JSON.parse((await readObject(server, `${id}/zarr/index.json`))!);
    assert.equal(index.source_commit, second);
    assert.equal(index.stores.find((s: { zarr: string }) => s.zarr.startsWith('sub-02')).n_events, 2);

    unlinkSync(path.join(repo, 'sub-02/eeg/sub-02_task-rest_eeg.edf'));
    gitIn(repo, 'commit', '-qam', 'remove a recording');
    const third = gitIn(repo, 'rev-parse', 'HEAD');
    await push(pushPayload('test-org/ds-pipeline', third, { removed: ['sub-02/eeg/sub-02_task-rest_eeg.edf'] }));
    await server.worker!.idle();
    const d = await dataset();
    assert.equal(d.zarr_store_count, 1);
    assert.equal(d.zarr_source_commit, third);
    assert.equal(await server.deps.objects.head(`${id}/zarr/sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json`), undefined);
    const left = [];
    for await (const o of server.deps.objects.list(`${id}/zarr/sub-02/`)) left.push(o.key);
    assert.deepEqual(left, []);
  });

  it('a delivery of an older commit that arrives late converts nothing and leaves the newer copy as it is', async () => {
    // GitHub does not promise the order of deliveries, and redelivers on request: this one names the first commit.
    const head = gitIn(repo, 'rev-parse', 'HEAD');
    const first = gitIn(repo, 'rev-list', '--max-parents=0', 'HEAD');
    const index = await readObject(server, `${id}/zarr/index.json`);
    const jobsBefore = await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).execute();
    const res = await push(pushPayload('test-org/ds-pipeline', first, { added: ['sub-02/eeg/sub-02_task-rest_eeg.edf'] }));
    assert.equal(res.status, 200);
    await server.worker!.idle();
    const jobs = await server.deps.db.selectFrom('conversion_jobs').selectAll().where('dataset_id', '=', id).orderBy('id', 'desc').execute();
    assert.equal(jobs.length, jobsBefore.length + 1, 'the delivery queued a job');
    assert.equal(jobs[0].state, 'done');
    assert.deepEqual(jobs[0].result, { skipped: 'stale_delivery', commit: first, main: head });
    assert.equal(await readObject(server, `${id}/zarr/index.json`), index, 'index.json is the newer one still');
    // The recording removed since the first commit is not written back.
    assert.equal(await server.deps.objects.head(`${id}/zarr/sub-02/eeg/sub-02_task-rest_eeg.zarr/zarr.json`), undefined);
    const d = await dataset();
    assert.deepEqual([d.zarr_status, d.zarr_source_commit, d.zarr_store_count], ['ready', head, 1]);
  });

  it('answers what it decided for pushes it does not convert', async () => {
    const head = gitIn(repo, 'rev-parse', 'HEAD');
    const cases: Array<[unknown, string]> = [
      [pushPayload('test-org/ds-pipeline', head, { added: ['sub-01/emg/x_emg.edf'] }, 'refs/heads/dev'), 'not_main_branch'],
      [{ ...pushPayload('test-org/ds-pipeline', '0'.repeat(40), {}), deleted: true }, 'branch_deleted'],
      [pushPayload('test-org/ds-pipeline', head, { modified: ['README.md', 'derivatives/sub-01/x_eeg.edf', 'sub-01/emg/sub-01_task-holdWeight_channels.tsv'] }), 'no_relevant_change'],
      [pushPayload('someone/else', head, { added: ['sub-01/eeg/a_eeg.edf'] }), 'unknown_repository'],
    ];
    for (const [payload, reason] of cases) {
      const res = await push(payload);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { dispatched: false, reason });
    }
    const ping = await push({ zen: 'hi' }, 'ping');
    assert.deepEqual(await ping.json(), { dispatched: false, reason: 'ping' });
    const forged = await push(pushPayload('test-org/ds-pipeline', head, { added: ['sub-01/emg/a_emg.edf'] }), 'push', 'wrong-secret');
    assert.equal(forged.status, 401);
  });

  it('zarr-ready needs the token, knows the dataset, ignores an older commit, and replays harmlessly', async () => {
    const d0 = await dataset();
    const first = gitIn(repo, 'rev-list', '--max-parents=0', 'HEAD');
    const post = (body: unknown, token: string | null = TOKEN) =>
      fetch(`${server.url}/webhooks/zarr-ready`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { 'x-webhook-token': token } : {}) }, body: JSON.stringify(body) });
    assert.equal((await post({ dataset_id: id, status: 'ready', commit: first }, null)).status, 401);
    assert.equal((await post({ dataset_id: id, status: 'ready', commit: first }, 'wrong')).status, 401);
    assert.equal((await post({ dataset_id: 'nd999999', status: 'ready', commit: first })).status, 404);
    assert.equal((await post({ dataset_id: id, status: 'done', commit: first })).status, 400);
    const older = await post({ dataset_id: id, status: 'ready', commit: first, store_count: 7 });
    assert.equal(older.status, 200);
    assert.deepEqual(await older.json(), { applied: false, reason: 'older_commit', purged: [] });
    assert.equal((await dataset()).zarr_store_count, d0.zarr_store_count);
    const replay = await post({ dataset_id: id, status: 'ready', commit: d0.zarr_source_commit, store_count: d0.zarr_store_count, index_etag: d0.zarr_index_etag, converted: [], removed: [] });
    assert.equal(replay.status, 200);
    const d1 = await dataset();
    assert.deepEqual([d1.zarr_status, d1.zarr_store_count, d1.zarr_source_commit, d1.zarr_index_etag], [d0.zarr_status, d0.zarr_store_count, d0.zarr_source_commit, d0.zarr_index_etag]);
  });

  it('regenerate and status through the admin routes; concurrent dispatches coalesce', async () => {
    const member = await createAccount(server);
    assert.equal((await member.api(`/admin/datasets/${id}/zarr/regenerate`, { method: 'POST' })).status, 403);
    const answers = await Promise.all(Array.from({ length: 10 }, () => admin.api(`/admin/datasets/${id}/zarr/regenerate`, { method: 'POST', body: JSON.stringify({ full: true }) })));
    assert.ok(answers.every((r) => r.status === 202));
    const queuedOrRunning = await server.deps.db.selectFrom('conversion_jobs').select(['state']).where('dataset_id', '=', id).where('state', 'in', ['queued', 'running']).execute();
    assert.ok(queuedOrRunning.filter((j) => j.state === 'queued').length <= 1);
    assert.ok(queuedOrRunning.filter((j) => j.state === 'running').length <= 1);
    await server.worker!.idle();
    const status = await (await admin.api(`/admin/datasets/${id}/zarr`)).json();
    assert.equal(status.zarr_status, 'ready');
    assert.equal(status.zarr_store_count, 1);
    assert.equal(status.jobs[0].state, 'done');
    assert.equal(status.jobs[0].full, true);
    assert.equal((await admin.api('/admin/datasets/nd999998/zarr/regenerate', { method: 'POST' })).status, 404);
  });
});
