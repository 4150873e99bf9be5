/**
 * A conversion's outcome is recorded the same way whoever ran it: a worker of nds writes it to the database
 * itself (no HTTP request to its own PUBLIC_URL, which a worker on another host may not reach), and an
 * external runner's `POST /webhooks/zarr-ready` updates the recording catalogue and the search fields too.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { createAccount, apiFetch } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { freePort, startTestServer, type TestServer } from '../support/test-server.js';
import { hostCopy, hostedSource, makeBidsRepo } from './support.js';

const TOKEN = 'zarr-ready-token';

/** Everything a server's object store holds under `prefix`, key → bytes. */
async function objectsUnder(server: TestServer, prefix: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for await (const o of server.deps.objects.list(prefix)) {
    const got = await server.deps.objects.get(o.key);
    const chunks: Buffer[] = [];
    for await (const c of got!.body) chunks.push(c as Buffer);
    out.set(o.key, Buffer.concat(chunks));
  }
  return out;
}

async function catalogueOf(server: TestServer, id: string): Promise<string[]> {
  const rows = await server.deps.db.selectFrom('recordings').select('path').where('dataset_id', '=', id).orderBy('path').execute();
  return rows.map((r) => r.path);
}

describe('a conversion recorded without the public URL', () => {
  let local: TestServer;
  let requestsToPublicUrl = 0;
  let publicUrl: Server;
  const id = 'nd000231';
  const repo = makeBidsRepo();

  before(async () => {
    // PUBLIC_URL points at a server that counts what reaches it: the worker must send nothing there.
    publicUrl = createServer((req, res) => {
      requestsToPublicUrl++;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => publicUrl.listen(0, '127.0.0.1', resolve));
    const port = (publicUrl.address() as AddressInfo).port;
    // The worker fetches the hosted repository from NODE_URL, this node's own address among nodes (decision 0026).
    const nodePort = await freePort();
    local = await startTestServer({ env: { SERVICE_WEBHOOK_TOKEN: TOKEN, PUBLIC_URL: `http://127.0.0.1:${port}`, PORT: String(nodePort), NODE_URL: `http://127.0.0.1:${nodePort}` } });
    const owner = await createAccount(local, { role: 'admin' });
    hostCopy(local.config.gitDir, id, repo);
    await insertDatasetRows(local.deps.db, { id, name: 'Recorded directly', owner_id: owner.user.id, visibility: 'public', source_repo: hostedSource });
  });
  after(async () => {
    await local.close();
    await new Promise((resolve) => publicUrl.close(resolve));
  });

  it('a worker records its result in the database, catalogue and search fields included, with no request to PUBLIC_URL', async () => {
    await enqueueConversion(local.deps.db, { datasetId: id, ref: 'HEAD', full: true, reason: 'test' });
    local.worker!.wake();
    await local.worker!.idle();
    const row = await local.deps.db.selectFrom('datasets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.zarr_status, 'ready');
    assert.equal(row.zarr_store_count, 2);
    assert.deepEqual(await catalogueOf(local, id), ['sub-01/emg/sub-01_task-holdWeight_emg.edf', 'sub-02/eeg/sub-02_task-rest_eeg.edf']);
    assert.ok(row.sampling_rates && row.sampling_rates.length > 0, 'the search fields were derived from the copy');
    assert.equal(requestsToPublicUrl, 0, 'no HTTP request to its own PUBLIC_URL');
  });

  describe('an external runner (CONVERSION_DISPATCH=github) reporting through POST /webhooks/zarr-ready', () => {
    let external: TestServer;
    before(async () => {
      external = await startTestServer({
        env: { SERVICE_WEBHOOK_TOKEN: TOKEN, CONVERSION_DISPATCH: 'github', GITHUB_DISPATCH_REPO: 'test-org/conversions', GITHUB_TOKEN: 'test-token' },
      });
      const owner = await createAccount(external, { role: 'admin' });
      await insertDatasetRows(external.deps.db, { id, name: 'Converted elsewhere', owner_id: owner.user.id, visibility: 'public', source_repo: 'https://github.com/test-org/ds' });
    });
    after(() => external.close());

    it('updates the recording catalogue and the search fields as the local path does', async () => {
      // The runner wrote the copy into the shared object store (here: the one the local worker made, copied over).
      const copy = await objectsUnder(local, `${id}/zarr/`);
      for (const [key, bytes] of copy) await external.deps.objects.put(key, bytes);
      const index = JSON.parse(copy.get(`${id}/zarr/index.json`)!.toString('utf8'));
      assert.deepEqual(await catalogueOf(external, id), [], 'nothing catalogued before the callback');

      const res = await fetch(`${external.url}/webhooks/zarr-ready`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-webhook-token': TOKEN },
        body: JSON.stringify({ dataset_id: id, status: 'ready', commit: index.source_commit, store_count: index.store_count }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(((await res.json()) as { applied: boolean }).applied, true);

      assert.deepEqual(await catalogueOf(external, id), await catalogueOf(local, id));
      const listed = await apiFetch(external, `/recordings?dataset=${id}`);
      assert.equal(listed.status, 200);
      const body = (await listed.json()) as { recordings: Array<{ path: string }> };
      assert.deepEqual(body.recordings.map((r) => r.path).sort(), await catalogueOf(local, id));
      const fields = (id: string, server: TestServer) =>
        server.deps.db.selectFrom('datasets').select(['sampling_rates', 'channel_counts', 'tasks', 'modalities', 'zarr_status', 'zarr_store_count']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual(await fields(id, external), await fields(id, local));
    });
  });
});
