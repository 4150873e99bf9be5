/**
 * `nds gateway` beside `nds serve`: two instances sharing one Redis cache, datasets dropped on every
 * instance, and the callback's edge purge (EDGE_API_BASE pointed at the standalone gateway) end to end.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { insertDataset, newDatasetId, putZarrCopy, rawRequest, startStandaloneGateway, STORE, waitFor, withRedis, type StandaloneGateway } from './support.js';

const REDIS = 'redis://127.0.0.1:6379/7';
const TOKEN = 'edge-token-for-tests-0123456789';
const WEBHOOK = 'webhook-token-for-tests-0123456789';
const chunkPath = `${STORE}/eeg_250hz/0/c/0/0`;

describe('standalone gateway and shared cache', () => {
  let api: TestServer;
  let gw: StandaloneGateway;
  let id: string;

  before(async () => {
    gw = await startStandaloneGateway({ CACHE_REDIS_URL: REDIS, EDGE_API_TOKEN: TOKEN, EDGE_ZONE_ID: 'zone1' });
    api = await startTestServer({
      env: { CACHE_REDIS_URL: REDIS, EDGE_API_TOKEN: TOKEN, EDGE_ZONE_ID: 'zone1', EDGE_API_BASE: `${gw.url}/edge`, SERVICE_WEBHOOK_TOKEN: WEBHOOK },
    });
    id = newDatasetId();
    // Each instance has its own database and store here; only the API's store holds the objects, so an
    // answer from the standalone gateway for them can only come from the shared cache.
    await insertDataset(api.deps.db, id);
    await insertDataset(gw.deps.db, id);
    await putZarrCopy(api.deps.objects, id);
  });
  after(async () => {
    await api?.close();
    await gw?.close();
  });

  const onApi = (path: string, datasetId = id) => rawRequest(api.url, `/zarrproxy/${datasetId}/zarr/${path}`);
  const onGateway = (path: string, datasetId = id) => rawRequest(gw.url, `/${datasetId}/zarr/${path}`);

  it('runs on its own with /healthz and the gateway at / and /zarrproxy', async () => {
    assert.equal((await rawRequest(gw.url, '/healthz')).status, 200);
    const ds = newDatasetId();
    await insertDataset(gw.deps.db, ds);
    await putZarrCopy(gw.deps.objects, ds);
    assert.equal((await rawRequest(gw.url, `/${ds}/zarr/index.json`)).status, 200);
    assert.equal((await rawRequest(gw.url, `/zarrproxy/${ds}/zarr/index.json`)).headers['x-cache'], 'HIT');
    assert.equal((await rawRequest(gw.url, `/${ds}/zarr/../x`)).status, 400);
  });

  it('shares cached objects through Redis: a miss on one instance is a hit on the other', async () => {
    const a = await onApi(chunkPath);
    assert.equal(a.status, 200);
    assert.equal(a.headers['x-cache'], 'MISS');
    const b = await onGateway(chunkPath);
    assert.equal(b.status, 200);
    assert.equal(b.headers['x-cache'], 'HIT');
    assert.deepEqual(b.body, a.body);
    assert.equal(b.headers.etag, a.headers.etag);
    assert.equal(b.headers['cache-control'], 'public, max-age=86400');
    const ttl = await withRedis(REDIS, (r) => r.pttl(`nds:gw:o:${id}/zarr/${chunkPath}`));
    assert.ok(ttl > 86_000_000 && ttl <= 86_400_000, `PX ttl ${ttl}`);
    const range = await rawRequest(gw.url, `/${id}/zarr/${chunkPath}`, { headers: { range: 'bytes=-4' } });
    assert.equal(range.status, 206);
    assert.deepEqual(range.body, a.body.subarray(996));
  });

  it('drops a dataset that went private on every instance at once', async () => {
    const ds = newDatasetId();
    await insertDataset(api.deps.db, ds);
    await insertDataset(gw.deps.db, ds);
    await putZarrCopy(api.deps.objects, ds);
    await putZarrCopy(gw.deps.objects, ds);
    await onApi(chunkPath, ds);
    assert.equal((await onGateway(chunkPath, ds)).headers['x-cache'], 'HIT');
    // The standalone gateway now holds the answer "public" for 60 s and the object in its own memory.
    await api.deps.db.updateTable('datasets').set({ visibility: 'private' }).where('id', '=', ds).execute();
    await gw.deps.db.updateTable('datasets').set({ visibility: 'private' }).where('id', '=', ds).execute();
    for (const hook of api.deps.hooks.datasetVisibilityChanged) await hook(ds);
    await waitFor(async () => (await onGateway(chunkPath, ds)).status === 404);
    assert.equal((await onApi(chunkPath, ds)).status, 404);
    assert.equal(await withRedis(REDIS, (r) => r.exists(`nds:gw:o:${ds}/zarr/${chunkPath}`, `nds:gw:d:${ds}`)), 0);
  });

  it('purges through the standalone gateway when a conversion callback arrives', async () => {
    await putZarrCopy(gw.deps.objects, id);
    await onGateway(`${STORE}/zarr.json`);
    assert.equal((await onGateway(`${STORE}/zarr.json`)).headers['x-cache'], 'HIT');
    assert.equal((await onGateway('index.json')).headers['x-cache'], 'MISS');
    assert.equal((await onGateway('index.json')).headers['x-cache'], 'HIT');
    // Redis alone would also carry the API's own drop to this instance: record what the purge endpoint drops.
    const gateway = gw.gateway;
    const purged: string[] = [];
    const dropKeys = gateway.dropKeys.bind(gateway);
    gateway.dropKeys = async (keys) => {
      purged.push(...keys);
      await dropKeys(keys);
    };
    const res = await fetch(`${api.url}/webhooks/zarr-ready`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-token': WEBHOOK },
      body: JSON.stringify({ dataset_id: id, status: 'ready', commit: 'b'.repeat(40), store_count: 1, index_etag: '"y"', converted: [STORE], removed: [], failure_count: 0 }),
    });
    assert.equal(res.status, 200);
    await waitFor(async () => (await onGateway('index.json')).headers['x-cache'] === 'MISS');
    assert.equal((await onGateway(`${STORE}/zarr.json`)).headers['x-cache'], 'MISS');
    assert.equal((await onGateway(chunkPath)).headers['x-cache'], 'HIT');
  });

});
