/**
 * The gateway's purge endpoint (CONTRACT §6.4) speaking the CDN's protocol: `files`, `prefixes` and
 * `purge_everything`, its answer shape and its refusals, over HTTP, on the in-process cache and on two
 * instances sharing Redis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { keyPrefixesOf } from '../../src/gateway/purge-endpoint.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { insertDataset, newDatasetId, putZarrCopy, rawRequest, startStandaloneGateway, STORE, waitFor, withRedis, type RawAnswer, type StandaloneGateway } from './support.js';

const TOKEN = 'edge-token-for-tests-0123456789';
// purge_everything empties every `nds:gw:` key of its Redis database: this file has a database of its own,
// so it never empties the cache of another test file running at the same time.
const REDIS = 'redis://127.0.0.1:6379/8';
const chunkPath = `${STORE}/eeg_250hz/0/c/0/0`;

describe('purge prefixes', () => {
  it('maps host/path prefixes to object key prefixes below the base, below /zarrproxy and as they are', () => {
    // A prefix read in the wrong place names keys like `gw/nd...` or `zarrproxy/nd...`, which no object has.
    assert.deepEqual(keyPrefixesOf('gw.example.org/gw/nd000001/zarr/sub-01/', '/gw'), ['nd000001/zarr/sub-01/', 'gw/nd000001/zarr/sub-01/']);
    assert.deepEqual(keyPrefixesOf('api.example.org/zarrproxy/nd000001', ''), ['zarrproxy/nd000001', 'nd000001']);
    assert.deepEqual(keyPrefixesOf('gw.example.org/nd000001/zarr/a%20b', ''), ['nd000001/zarr/a b']);
  });

  it('reads a prefix of the whole gateway as everything, since the CDN matches plain string prefixes', () => {
    for (const p of ['gw.example.org', 'gw.example.org/', 'gw.example.org/g', 'gw.example.org/gw', 'gw.example.org/zarr']) {
      assert.equal(keyPrefixesOf(p, '/gw'), 'everything', p);
    }
  });

  it('drops a percent-escape cut in the middle rather than failing', () => {
    assert.deepEqual(keyPrefixesOf('h/nd000001/zarr/a%2', '').slice(0, 1), ['nd000001/zarr/a']);
  });
});

/** Two datasets whose index, zarr.json and chunk have been read once, so all six are cached. */
async function warm(get: (path: string, datasetId: string) => Promise<RawAnswer>, ids: string[]): Promise<void> {
  for (const ds of ids) for (const p of ['index.json', `${STORE}/zarr.json`, chunkPath]) assert.equal((await get(p, ds)).status, 200);
}

describe('purge endpoint on the in-process cache', () => {
  let server: TestServer;
  let a: string;
  let b: string;

  before(async () => {
    server = await startTestServer({ env: { EDGE_API_TOKEN: TOKEN, EDGE_ZONE_ID: 'zone1' } });
    a = newDatasetId();
    b = newDatasetId();
    for (const ds of [a, b]) {
      await insertDataset(server.deps.db, ds);
      await putZarrCopy(server.deps.objects, ds);
    }
  });
  after(() => server?.close());

  const get = (path: string, ds: string) => rawRequest(server.url, `/zarrproxy/${ds}/zarr/${path}`);
  const cacheOf = async (path: string, ds: string) => (await get(path, ds)).headers['x-cache'];
  const host = () => new URL(server.url).host;
  const purge = (body: string) =>
    rawRequest(server.url, '/zarrproxy/edge/zones/zone1/purge_cache', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body });

  it('drops the objects under a prefix, and only those, answering in the CDN shape', async () => {
    await warm(get, [a, b]);
    const res = await purge(JSON.stringify({ prefixes: [`${host()}/zarrproxy/${a}/zarr/sub-01/`] }));
    assert.equal(res.status, 200);
    const answer = JSON.parse(res.body.toString());
    assert.equal(answer.success, true);
    assert.deepEqual(answer.errors, []);
    assert.deepEqual(answer.messages, []);
    assert.match(answer.result.id, /^[0-9a-f]{32}$/);
    assert.equal(await cacheOf(chunkPath, a), 'MISS');
    assert.equal(await cacheOf(`${STORE}/zarr.json`, a), 'MISS');
    assert.equal(await cacheOf('index.json', a), 'HIT', 'index.json is not under the prefix');
    for (const p of ['index.json', `${STORE}/zarr.json`, chunkPath]) assert.equal(await cacheOf(p, b), 'HIT', `${b} ${p}`);
  });

  it('empties the whole cache on purge_everything, missing-object answers included', async () => {
    await warm(get, [a, b]);
    assert.equal((await get('no-such-object', a)).status, 404);
    assert.equal((await get('no-such-object', a)).headers['x-cache'], 'HIT');
    const res = await purge('{"purge_everything": true}');
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body.toString()).success, true);
    for (const ds of [a, b]) for (const p of ['index.json', `${STORE}/zarr.json`, chunkPath]) assert.equal(await cacheOf(p, ds), 'MISS', `${ds} ${p}`);
    assert.equal((await get('no-such-object', a)).headers['x-cache'], 'MISS');
  });

  it('refuses with 400 and error 1012 a body that is none of files, prefixes or purge_everything, dropping nothing', async () => {
    await warm(get, [a]);
    const bodies = [
      '{}',
      'not json',
      '{"purge_everything": false}',
      '{"purge_everything": true, "files": ["http://x/y"]}',
      '{"tags": ["zarr"]}',
      '{"hosts": ["gw.example.org"]}',
      '{"prefixes": []}',
      '{"prefixes": "gw.example.org/x"}',
      `{"prefixes": ["http://${host()}/zarrproxy/${a}"]}`,
      `{"prefixes": ["${host()}/zarrproxy/${a}?v=1"]}`,
    ];
    for (const body of bodies) {
      const res = await purge(body);
      assert.equal(res.status, 400, body);
      const answer = JSON.parse(res.body.toString());
      assert.equal(answer.success, false, body);
      assert.equal(answer.errors[0].code, 1012, body);
      assert.ok(answer.errors[0].message.length > 10, body);
    }
    assert.match(JSON.parse((await purge('{"tags": ["zarr"]}')).body.toString()).errors[0].message, /not supported/);
    for (const p of ['index.json', `${STORE}/zarr.json`, chunkPath]) assert.equal(await cacheOf(p, a), 'HIT', p);
  });

  it('refuses a body over 1 MiB with 413 in the CDN shape too, dropping nothing', async () => {
    await warm(get, [a]);
    const files = Array.from({ length: 900 }, (_, i) => `http://${host()}/zarrproxy/${a}/zarr/${'x'.repeat(1200)}${i}`);
    const res = await purge(JSON.stringify({ files }));
    assert.equal(res.status, 413);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const answer = JSON.parse(res.body.toString());
    assert.equal(answer.success, false);
    assert.equal(answer.errors[0].code, 1012);
    assert.match(answer.errors[0].message, /1048576 bytes/);
    for (const p of ['index.json', `${STORE}/zarr.json`, chunkPath]) assert.equal(await cacheOf(p, a), 'HIT', p);
  });
});

describe('purge endpoint on a cache shared through Redis', () => {
  let api: TestServer;
  let gw: StandaloneGateway;
  let a: string;
  let b: string;

  before(async () => {
    gw = await startStandaloneGateway({ CACHE_REDIS_URL: REDIS, EDGE_API_TOKEN: TOKEN, EDGE_ZONE_ID: 'zone1' });
    api = await startTestServer({ env: { CACHE_REDIS_URL: REDIS, EDGE_API_TOKEN: TOKEN, EDGE_ZONE_ID: 'zone1' } });
    a = newDatasetId();
    b = newDatasetId();
    for (const { deps } of [api, gw]) {
      for (const ds of [a, b]) {
        await insertDataset(deps.db, ds);
        await putZarrCopy(deps.objects, ds);
      }
    }
  });
  after(async () => {
    await api?.close();
    await gw?.close();
  });

  const onApi = (path: string, ds: string) => rawRequest(api.url, `/zarrproxy/${ds}/zarr/${path}`);
  const onGateway = (path: string, ds: string) => rawRequest(gw.url, `/${ds}/zarr/${path}`);
  const purge = (body: unknown) =>
    rawRequest(gw.url, '/edge/zones/zone1/purge_cache', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const redisKeys = (pattern: string) => withRedis(REDIS, (r) => r.keys(pattern));

  it('drops the objects under a prefix from Redis and from the memory of every instance', async () => {
    await warm(onApi, [a, b]);
    // The API's reads filled Redis; the gateway's reads are hits copied into its own memory.
    for (const p of [chunkPath, 'index.json']) assert.equal((await onGateway(p, a)).headers['x-cache'], 'HIT', p);
    assert.equal((await onApi(chunkPath, a)).headers['x-cache'], 'HIT');
    const res = await purge({ prefixes: [`${new URL(gw.url).host}/${a}/zarr/sub-01`] });
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body.toString()).success, true);
    assert.deepEqual(await redisKeys(`nds:gw:o:${a}/zarr/sub-01*`), []);
    assert.equal((await redisKeys(`nds:gw:o:${a}/zarr/index.json`)).length, 1);
    assert.equal((await redisKeys(`nds:gw:o:${b}/*`)).length, 3);
    assert.equal((await onGateway(chunkPath, a)).headers['x-cache'], 'MISS');
    // The API instance hears the purge on the pub/sub channel a moment later.
    await waitFor(async () => (await onApi(`${STORE}/zarr.json`, a)).headers['x-cache'] === 'MISS');
    assert.equal((await onApi('index.json', a)).headers['x-cache'], 'HIT');
  });

  it('empties Redis and the memory of every instance on purge_everything', async () => {
    await warm(onApi, [a, b]);
    for (const p of [chunkPath, 'index.json']) assert.equal((await onGateway(p, b)).headers['x-cache'], 'HIT', p);
    assert.ok((await redisKeys('nds:gw:*')).length >= 6);
    const res = await purge({ purge_everything: true });
    assert.equal(res.status, 200);
    // Objects and datasets' key sets go; the drop epochs stay (redis-cache.ts), counted up.
    assert.deepEqual(await redisKeys('nds:gw:[od]:*'), []);
    assert.ok((await redisKeys('nds:gw:e*')).length > 0);
    assert.equal((await onGateway(chunkPath, b)).headers['x-cache'], 'MISS');
    await waitFor(async () => (await onApi(chunkPath, a)).headers['x-cache'] === 'MISS');
    assert.equal((await onApi('index.json', b)).headers['x-cache'], 'MISS');
  });
});
