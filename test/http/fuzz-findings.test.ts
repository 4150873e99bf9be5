/**
 * The 500s and crashes `test/fuzz/http-fuzz.test.ts` found, each kept as a plain case: a bad percent-escape
 * in the gateway's purge zone, a source id decoded twice (`%2500` becoming a NUL), a NUL in a git path, and
 * a malformed git body that git stops reading (EPIPE) or a client that goes away mid-body.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { newDatasetId, rawRequest } from '../gateway/support.js';

describe('inputs the fuzz found answered with 500 or a crash', () => {
  let server: TestServer;
  let owner: TestAccount;
  let gitId: string;
  const uncaught: Error[] = [];
  const onUncaught = (err: Error) => uncaught.push(err);

  before(async () => {
    process.on('uncaughtException', onUncaught);
    server = await startTestServer({ env: { EDGE_API_TOKEN: 'edge-token-for-tests-0123456789', EDGE_ZONE_ID: 'zone1' } });
    owner = await createAccount(server);
    gitId = newDatasetId();
    await server.deps.db.insertInto('datasets').values({ id: gitId, name: 'Git input', owner_id: owner.user.id, visibility: 'public', source_repo: null, latest_version: null, n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: null, zarr_converted_at: null, zarr_store_count: null, zarr_index_etag: null, zarr_source_commit: null }).execute();
    const dir = repositoryDir(server.config.gitDir, gitId);
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', dir]);
  });
  after(async () => {
    process.off('uncaughtException', onUncaught);
    await server.close();
  });

  /**
   * POSTs a body and resolves with the status. The server may answer before it has read the body and close:
   * the client's later writes then fail (EPIPE) on a socket Node's client no longer reports on the request.
   */
  function postWhole(path: string, headers: Record<string, string>, body: Buffer): Promise<number> {
    const base = new URL(server.url);
    return new Promise((resolve, reject) => {
      const req = request({ host: base.hostname, port: base.port, method: 'POST', path, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('socket', (socket) => socket.on('error', () => {}));
      req.on('error', reject);
      req.end(body);
    });
  }

  const basic = () => `Basic ${Buffer.from(`nds:${owner.key}`).toString('base64')}`;

  it('answers a purge for a zone that is not valid percent-encoding as a purge of another zone', async () => {
    const r = await rawRequest(server.url, '/zarrproxy/edge/zones/%zz/purge_cache', { method: 'POST', headers: { authorization: 'Bearer edge-token-for-tests-0123456789', 'content-type': 'application/json' }, body: '{"purge_everything":true}' });
    assert.ok(r.status >= 400 && r.status < 500, `${r.status} ${r.body}`);
    assert.equal(JSON.parse(r.body.toString()).success, false);
  });

  it('leaves the query of a gateway request to the gateway, as nds gateway alone does: a purge answers in the CDN shape, an object is served', async () => {
    const long = `?x=${'x'.repeat(5000)}`;
    const purge = await rawRequest(server.url, `/zarrproxy/edge/zones/%zz/purge_cache${long}`, { method: 'POST', headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' }, body: '{"purge_everything":true}' });
    assert.equal(purge.status, 401, purge.body.toString());
    assert.deepEqual(JSON.parse(purge.body.toString()).errors, [{ code: 10000, message: 'Authentication error' }]);
    const missing = await rawRequest(server.url, `/zarrproxy/nd999999/zarr/zarr.json${long}`);
    assert.equal(missing.status, 404, missing.body.toString());
  });

  it('decodes a source id once: `%2500` is the text `%00`, not a NUL', async () => {
    for (const target of ['/datasets/resolve/a%2500b', '/datasets/resolve/%25zz', '/datasets/resolve/%25ED%25A0%2580']) {
      const r = await rawRequest(server.url, target);
      assert.equal(r.status, 404, `${target} → ${r.status} ${r.body}`);
      assert.equal(JSON.parse(r.body.toString()).error, 'dataset_not_found');
    }
  });

  it('refuses a NUL in a git path with 400', async () => {
    const r = await rawRequest(server.url, `/git/${gitId}.git/objects/%00`, { method: 'POST', headers: { authorization: basic() }, body: 'x' });
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.body.toString()).error, 'validation_failed');
  });

  it('survives a malformed push body git stops reading, and a client gone mid-body', async () => {
    const garbage = Buffer.alloc(4 * 1024 * 1024, 0x41);
    const pushed = await postWhole(`/git/${gitId}.git/git-receive-pack`, { authorization: basic(), 'content-type': 'application/x-git-receive-pack-request' }, garbage);
    assert.ok(pushed < 500, `answered ${pushed}`);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(uncaught.map((e) => e.message), [], 'after the push');

    // Half a body, then the client goes away.
    await new Promise<void>((resolve) => {
      const base = new URL(server.url);
      const req = request({ host: base.hostname, port: base.port, method: 'POST', path: `/git/${gitId}.git/git-upload-pack`, headers: { authorization: basic(), 'content-type': 'application/x-git-upload-pack-request', 'content-length': String(1024 * 1024) } });
      req.on('error', () => resolve());
      req.write(Buffer.alloc(64 * 1024, 0x30));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(uncaught.map((e) => e.message), []);
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  });
});
