/**
 * Object keys no store can hold (a segment past 255 bytes, a key past 1024 bytes), and the forms of `..`,
 * NUL and a file used as a folder: on the gateway and on `/objects/` they answer 400 or 404, never 500.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { insertDataset, newDatasetId, putZarrCopy, rawRequest, startStandaloneGateway, STORE } from './support.js';

describe('gateway and /objects/ with keys no store can hold', () => {
  let server: TestServer;
  let id: string;

  before(async () => {
    server = await startTestServer();
    id = newDatasetId();
    await insertDataset(server.deps.db, id);
    await putZarrCopy(server.deps.objects, id);
  });
  after(() => server.close());

  const longSegment = `nd${'9'.repeat(400)}`;
  const gatewayTargets = () => [
    `/zarrproxy/${id}/zarr/${longSegment}`,
    `/zarrproxy/${id}/zarr/${STORE}/${'a'.repeat(256)}`,
    `/zarrproxy/${id}/zarr/${encodeURIComponent('é'.repeat(130))}`,
    `/zarrproxy/${id}/zarr/${Array.from({ length: 20 }, () => 'b'.repeat(60)).join('/')}`,
    `/zarrproxy/${id}/zarr/index.json/under-a-file`,
    `/zarrproxy/${id}/zarr/${STORE}/zarr.json/x/y`,
  ];

  it('answers a gateway path with an over-long segment or key, or a file as a folder, with 404 (GET and HEAD)', async () => {
    for (const target of gatewayTargets()) {
      for (const method of ['GET', 'HEAD']) {
        const r = await rawRequest(server.url, target, { method });
        assert.equal(r.status, 404, `${method} ${target.slice(0, 80)}… → ${r.status} ${r.body.toString().slice(0, 200)}`);
        if (method === 'GET') assert.equal(JSON.parse(r.body.toString()).error, 'not_found');
      }
    }
  });

  it('refuses traversal, NUL and encoded slashes on the gateway with 400', async () => {
    for (const bad of ['..', '%2e%2e', '%2E%2e', '.', '%00', 'a%00b', 'a%2fb', 'a%5cb', '%zz', '%ED%A0%80']) {
      const r = await rawRequest(server.url, `/zarrproxy/${id}/zarr/${STORE}/${bad}/zarr.json`);
      assert.equal(r.status, 400, `${bad} → ${r.status}`);
      assert.equal(JSON.parse(r.body.toString()).error, 'bad_request');
    }
  });

  it('answers /objects/ reads of the same keys with 400, 403 or 404, and a PUT to them with 400 or 403', async () => {
    const targets = [
      `/objects/${id}/zarr/${longSegment}`,
      `/objects/${id}/zarr/${'a'.repeat(300)}/x`,
      `/objects/${id}/zarr/index.json/under-a-file`,
      `/objects/${id}/zarr/${Array.from({ length: 20 }, () => 'b'.repeat(60)).join('/')}`,
      `/objects/${id}/zarr/%2e%2e/%2e%2e/etc/passwd`,
      `/objects/${id}/zarr/a%00b`,
      `/objects/${'x'.repeat(300)}`,
    ];
    for (const target of targets) {
      const r = await rawRequest(server.url, target);
      // `%2e%2e` is resolved by the URL parser before routing: `/objects/etc/passwd` is then refused unsigned (403).
      assert.ok([400, 403, 404].includes(r.status), `GET ${target.slice(0, 80)}… → ${r.status} ${r.body.toString().slice(0, 200)}`);
      assert.ok(JSON.parse(r.body.toString()).error);
      const put = await rawRequest(server.url, target, { method: 'PUT', body: 'x', headers: { 'content-type': 'application/octet-stream' } });
      assert.ok(put.status === 400 || put.status === 403, `PUT ${target.slice(0, 80)}… → ${put.status}`);
    }
  });

  it('keeps serving the dataset afterwards', async () => {
    const r = await rawRequest(server.url, `/zarrproxy/${id}/zarr/index.json`);
    assert.equal(r.status, 200);
  });

  it('answers the same on `nds gateway` (its own node:http path)', async () => {
    const gateway = await startStandaloneGateway({});
    try {
      const own = newDatasetId();
      await insertDataset(gateway.deps.db, own);
      await putZarrCopy(gateway.deps.objects, own);
      for (const target of [`/${own}/zarr/${longSegment}`, `/${own}/zarr/index.json/under-a-file`, `/zarrproxy/${own}/zarr/${'c'.repeat(300)}`]) {
        const r = await rawRequest(gateway.url, target);
        assert.equal(r.status, 404, `${target.slice(0, 60)}… → ${r.status} ${r.body}`);
      }
      assert.equal((await rawRequest(gateway.url, `/${own}/zarr/%2e%2e/x`)).status, 400);
      assert.equal((await rawRequest(gateway.url, `/${own}/zarr/index.json`)).status, 200);
    } finally {
      await gateway.close();
    }
  });
});
