/** The rules of CONTRACT §6.2 over HTTP, against the real server (`nds serve`'s app, real database and store). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, startTestServer, type TestServer } from '../support/test-server.js';
import { insertDataset, newDatasetId, putZarrCopy, rawRequest, STORE, type RawAnswer } from './support.js';

const ORIGIN = 'http://localhost:5173';
const TOKEN = 'edge-token-for-tests-0123456789';
const WEBHOOK = 'webhook-token-for-tests-0123456789';

describe('browser gateway over HTTP', () => {
  let server: TestServer;
  let gatewayBase: string;
  let id: string;
  let chunk: Buffer;
  let index: string;
  const chunkPath = `${STORE}/eeg_250hz/0/c/0/0`;

  before(async () => {
    const port = await freePort();
    gatewayBase = `http://127.0.0.1:${port}`;
    server = await startTestServer({
      env: { PORT: String(port), SERVICE_DOMAIN: 'nds.example.org', ZARR_CACHE_BASE_URL: gatewayBase, EDGE_API_TOKEN: TOKEN, EDGE_ZONE_ID: 'zone1', SERVICE_WEBHOOK_TOKEN: WEBHOOK },
    });
    id = newDatasetId();
    await insertDataset(server.deps.db, id);
    ({ chunk, index } = await putZarrCopy(server.deps.objects, id));
  });
  after(() => server.close());

  const get = (path: string, headers: Record<string, string> = {}, method = 'GET', datasetId = id): Promise<RawAnswer> =>
    rawRequest(server.url, `/zarrproxy/${datasetId}/zarr/${path}`, { method, headers });

  it('serves a chunk whole with ETag, Content-Length, Accept-Ranges and a day of caching, then from its cache', async () => {
    const first = await get(chunkPath, { 'accept-encoding': 'gzip, br' });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, chunk);
    assert.equal(first.headers['content-length'], '1000');
    assert.equal(first.headers['accept-ranges'], 'bytes');
    assert.match(String(first.headers.etag), /^"[^"]+"$/);
    assert.equal(first.headers['content-type'], 'application/octet-stream');
    assert.equal(first.headers['cache-control'], 'public, max-age=86400');
    assert.equal(first.headers['content-encoding'], undefined);
    assert.equal(first.headers['x-cache'], 'MISS');
    const second = await get(chunkPath);
    assert.equal(second.headers['x-cache'], 'HIT');
    assert.deepEqual(second.body, chunk);
    assert.equal(second.headers.etag, first.headers.etag);
  });

  it('serves index.json and zarr.json as JSON cached for 60 s', async () => {
    const idx = await get('index.json');
    assert.equal(idx.status, 200);
    assert.equal(idx.headers['content-type'], 'application/json');
    assert.equal(idx.headers['cache-control'], 'public, max-age=60');
    assert.equal(idx.body.toString(), index);
    const meta = await get(`${STORE}/zarr.json`);
    assert.equal(meta.headers['cache-control'], 'public, max-age=60');
    assert.equal(JSON.parse(meta.body.toString()).zarr_format, 3);
  });

  it('answers single ranges a-b, a- and -n with 206 and Content-Range, cached or not', async () => {
    for (const path of [`${STORE}/zarr.json`, chunkPath]) {
      const size = path === chunkPath ? 1000 : (await get(path)).body.length;
      const whole = (await get(path)).body;
      for (const [range, start, end] of [['bytes=2-9', 2, 9], ['bytes=10-', 10, size - 1], ['bytes=-7', size - 7, size - 1]] as const) {
        const r = await get(path, { range });
        assert.equal(r.status, 206, `${path} ${range}`);
        assert.equal(r.headers['content-range'], `bytes ${start}-${end}/${size}`);
        assert.equal(r.headers['content-length'], String(end - start + 1));
        assert.equal(r.headers['accept-ranges'], 'bytes');
        assert.ok(r.headers.etag);
        assert.deepEqual(r.body, whole.subarray(start, end + 1));
      }
    }
    // A range asked before the object is cached: the whole object is fetched and kept, the answer is 206.
    const fresh = newDatasetId();
    await insertDataset(server.deps.db, fresh);
    await putZarrCopy(server.deps.objects, fresh);
    const r = await get(chunkPath, { range: 'bytes=-3' }, 'GET', fresh);
    assert.equal(r.status, 206);
    assert.deepEqual(r.body, chunk.subarray(997));
    assert.equal(r.headers['x-cache'], 'MISS');
    assert.equal((await get(chunkPath, {}, 'GET', fresh)).headers['x-cache'], 'HIT');
  });

  it('answers an unsatisfiable range with 416 and Content-Range bytes */size', async () => {
    const r = await get(chunkPath, { range: 'bytes=1000-' });
    assert.equal(r.status, 416);
    assert.equal(r.headers['content-range'], 'bytes */1000');
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const fresh = newDatasetId();
    await insertDataset(server.deps.db, fresh);
    await putZarrCopy(server.deps.objects, fresh);
    for (const datasetId of [fresh, fresh, id]) {
      const h = await get(chunkPath, {}, 'HEAD', datasetId);
      assert.equal(h.status, 200);
      assert.equal(h.headers['content-length'], '1000');
      assert.equal(h.headers['accept-ranges'], 'bytes');
      assert.ok(h.headers.etag);
      assert.equal(h.body.length, 0);
      const hr = await get(chunkPath, { range: 'bytes=-10' }, 'HEAD', datasetId);
      assert.equal(hr.status, 206);
      assert.equal(hr.headers['content-length'], '10');
      assert.equal(hr.headers['content-range'], 'bytes 990-999/1000');
    }
  });

  it('answers If-None-Match with 304 when the ETag matches, on a hit and on a miss', async () => {
    const etag = String((await get(chunkPath)).headers.etag);
    const hit = await get(chunkPath, { 'if-none-match': etag });
    assert.equal(hit.status, 304);
    assert.equal(hit.headers.etag, etag);
    assert.equal(hit.body.length, 0);
    assert.equal((await get(chunkPath, { 'if-none-match': '"other"' })).status, 200);
    const fresh = newDatasetId();
    await insertDataset(server.deps.db, fresh);
    await putZarrCopy(server.deps.objects, fresh);
    const freshTag = (await server.deps.objects.head(`${fresh}/zarr/${chunkPath}`))!.etag;
    const miss = await get(chunkPath, { 'if-none-match': `"x", W/${freshTag}` }, 'GET', fresh);
    assert.equal(miss.status, 304);
  });

  it('echoes an allowed Origin with Vary and the exposed headers', async () => {
    for (const origin of [ORIGIN, 'https://nds.example.org', 'https://viewer.nds.example.org', 'http://[::1]:8000']) {
      const r = await get(`${STORE}/zarr.json`, { origin, range: 'bytes=0-3' });
      assert.equal(r.status, 206);
      assert.equal(r.headers['access-control-allow-origin'], origin);
      assert.equal(r.headers.vary, 'Origin');
      assert.equal(r.headers['access-control-expose-headers'], 'ETag, Content-Length, Content-Range, Accept-Ranges');
    }
  });

  it('gives a foreign origin, evil<domain> included, no Access-Control-Allow-Origin', async () => {
    for (const origin of ['https://evilnds.example.org', 'https://nds.example.org.evil.com', 'http://127.0.0.2:8080', 'null']) {
      const r = await get('index.json', { origin });
      assert.equal(r.status, 200);
      assert.equal(r.headers['access-control-allow-origin'], undefined, origin);
      assert.equal(r.headers.vary, 'Origin');
    }
  });

  it('answers a preflight with 204, the allowed methods and the Range header', async () => {
    const r = await get(chunkPath, { origin: ORIGIN, 'access-control-request-method': 'GET', 'access-control-request-headers': 'range' }, 'OPTIONS');
    assert.equal(r.status, 204);
    assert.equal(r.headers['access-control-allow-origin'], ORIGIN);
    assert.equal(r.headers['access-control-allow-methods'], 'GET, HEAD, OPTIONS');
    assert.equal(r.headers['access-control-allow-headers'], 'Range, Authorization');
    const foreign = await get(chunkPath, { origin: 'https://evil.example' }, 'OPTIONS');
    assert.equal(foreign.status, 204);
    assert.equal(foreign.headers['access-control-allow-origin'], undefined);
  });

  it('refuses other methods with 405 and Allow', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const r = await get('index.json', {}, method);
      assert.equal(r.status, 405, method);
      assert.equal(r.headers.allow, 'GET, HEAD, OPTIONS');
    }
  });

  it('refuses traversal and malformed paths with 400, as sent on the wire', async () => {
    for (const target of [
      `/zarrproxy/${id}/zarr/../${id}/zarr/index.json`,
      `/zarrproxy/${id}/zarr/${STORE}/../index.json`,
      `/zarrproxy/${id}/zarr/./index.json`,
      `/zarrproxy/${id}/zarr//index.json`,
      `/zarrproxy/${id}/zarr/%2e%2e/zarr/index.json`,
      `/zarrproxy/${id}/zarr/%2E%2E/zarr/index.json`,
      `/zarrproxy/${id}/zarr/%2e/index.json`,
      `/zarrproxy/${id}/zarr/a%5cb`,
      `/zarrproxy/${id}/zarr/a%00b`,
      `/zarrproxy/${id}/zarr/a%2f..%2findex.json`,
      `/zarrproxy/${id}/zarr/`,
      '/zarrproxy/nd12/zarr/index.json',
      '/zarrproxy/xx000001/zarr/index.json',
      `${new URL(gatewayBase).pathname.replace(/\/$/, '')}/../zarrproxy/${id}/zarr/index.json`,
    ]) {
      const r = await rawRequest(server.url, target, { headers: { origin: ORIGIN } });
      assert.equal(r.status, 400, target);
      assert.equal(r.headers['access-control-allow-origin'], ORIGIN, 'errors stay readable by an allowed page');
    }
    const backslash = await rawRequest(server.url, `/zarrproxy/${id}/zarr/a\\b`);
    assert.equal(backslash.status, 400);
  });

  it('answers 404 for a private or unknown dataset, and for a missing object (cached)', async () => {
    const hidden = newDatasetId();
    await insertDataset(server.deps.db, hidden, 'private');
    await putZarrCopy(server.deps.objects, hidden);
    assert.equal((await get('index.json', {}, 'GET', hidden)).status, 404);
    assert.equal((await get('index.json', {}, 'HEAD', hidden)).status, 404);
    assert.equal((await get('index.json', {}, 'GET', newDatasetId())).status, 404);
    const missing = await get(`${STORE}/eeg_250hz/0/c/0/99`, { origin: ORIGIN });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers['x-cache'], 'MISS');
    assert.equal(missing.headers['access-control-allow-origin'], ORIGIN);
    assert.equal((await get(`${STORE}/eeg_250hz/0/c/0/99`)).headers['x-cache'], 'HIT');
  });

  it('re-checks visibility on a miss after at most 60 s', async () => {
    const ds = newDatasetId();
    await insertDataset(server.deps.db, ds);
    await putZarrCopy(server.deps.objects, ds);
    assert.equal((await get('index.json', {}, 'GET', ds)).status, 200);
    await server.deps.db.updateTable('datasets').set({ visibility: 'private' }).where('id', '=', ds).execute();
    // No hook was called: the remembered answer still holds for a miss within the minute...
    assert.equal((await get(`${STORE}/zarr.json`, {}, 'GET', ds)).status, 200);
    server.clock.advance(60_001);
    // ...and not after it (index.json's own 60 s entry has expired too).
    assert.equal((await get(chunkPath, {}, 'GET', ds)).status, 404);
    assert.equal((await get('index.json', {}, 'GET', ds)).status, 404);
  });

  it('drops a dataset that went private at once, cached objects included', async () => {
    const ds = newDatasetId();
    await insertDataset(server.deps.db, ds);
    await putZarrCopy(server.deps.objects, ds);
    await get(chunkPath, {}, 'GET', ds);
    assert.equal((await get(chunkPath, {}, 'GET', ds)).headers['x-cache'], 'HIT');
    await server.deps.db.updateTable('datasets').set({ visibility: 'private' }).where('id', '=', ds).execute();
    for (const hook of server.deps.hooks.datasetVisibilityChanged) await hook(ds);
    assert.equal((await get(chunkPath, {}, 'GET', ds)).status, 404);
  });

  it('serves the same routes at / on the gateway host of ZARR_CACHE_BASE_URL', async () => {
    const r = await rawRequest(gatewayBase, `/${id}/zarr/${chunkPath}`, { headers: { origin: ORIGIN } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, chunk);
    assert.equal(r.headers['access-control-allow-origin'], ORIGIN);
    assert.equal((await rawRequest(gatewayBase, `/${id}/zarr/../x`)).status, 400);
    // The API is not on the gateway host.
    assert.notEqual((await rawRequest(gatewayBase, '/healthz')).status, 200);
  });

  it('drops purged URLs on POST /edge/zones/:zone/purge_cache with the bearer token', async () => {
    await get('index.json');
    assert.equal((await get('index.json')).headers['x-cache'], 'HIT');
    const body = JSON.stringify({ files: [`${gatewayBase}/${id}/zarr/index.json`] });
    const purge = (auth: string, zone = 'zone1') =>
      rawRequest(server.url, `/zarrproxy/edge/zones/${zone}/purge_cache`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body });
    const refused = await purge('Bearer wrong-token-of-the-same-size');
    assert.equal(refused.status, 401);
    assert.equal(JSON.parse(refused.body.toString()).success, false);
    assert.equal((await purge(`Bearer ${TOKEN}`, 'zone2')).status, 404);
    assert.equal((await get('index.json')).headers['x-cache'], 'HIT', 'a refused purge drops nothing');
    const ok = await purge(`Bearer ${TOKEN}`);
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body.toString()).success, true);
    assert.equal((await get('index.json')).headers['x-cache'], 'MISS');
    const bad = await rawRequest(server.url, '/zarrproxy/edge/zones/zone1/purge_cache', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"files": 3}' });
    assert.equal(bad.status, 400);
  });

  it('drops the stale metadata of a conversion when its callback arrives', async () => {
    await get(`${STORE}/zarr.json`);
    assert.equal((await get(`${STORE}/zarr.json`)).headers['x-cache'], 'HIT');
    assert.equal((await get(chunkPath)).headers['x-cache'], 'HIT');
    const res = await fetch(`${server.url}/webhooks/zarr-ready`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-webhook-token': WEBHOOK },
      body: JSON.stringify({ dataset_id: id, status: 'ready', commit: 'a'.repeat(40), store_count: 1, index_etag: '"x"', converted: [STORE], removed: [], failure_count: 0 }),
    });
    assert.equal(res.status, 200);
    assert.equal((await get(`${STORE}/zarr.json`)).headers['x-cache'], 'MISS');
    assert.equal((await get(chunkPath)).headers['x-cache'], 'HIT', 'chunks are not purged');
  });
});
