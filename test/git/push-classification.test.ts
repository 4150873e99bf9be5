/**
 * Which git requests are pushes: nds reads a request as git http-backend does (the query's `service` decoded:
 * `git%2Dreceive-pack` is `git-receive-pack` to git), so the rules of a push (the owner and its maintainers; a
 * worker's fetch credential refused) hold for every spelling; and a run nds judged a read has receive-pack
 * turned off in git itself, so whatever git reads otherwise fails closed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signGitFetchCredential } from '../../src/datasets/git-fetch-credential.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, gitRun } from '../conversion/support.js';

const PUBLIC_ID = 'nd000611';
const PRIVATE_ID = 'nd000612';
const basic = (key: string) => `Basic ${Buffer.from(`nds:${key}`).toString('base64')}`;

describe('the push classification of a git request, against git reading the same query', { timeout: 120_000 }, () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  const work = mkdtempSync(path.join(os.tmpdir(), 'nds-git-service-'));

  /** The status of `info/refs?<query>` of `id`, and whether git answered with the receive-pack advertisement. */
  const refs = async (id: string, query: string, authorization?: string) => {
    const res = await fetch(`${server.url}/git/${id}.git/info/refs?${query}`, { headers: authorization ? { authorization } : {} });
    const body = await res.text();
    return { status: res.status, receivePackAdvertised: body.includes('# service=git-receive-pack') };
  };

  before(async () => {
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    owner = await createAccount(server);
    stranger = await createAccount(server);
    await insertDatasetRows(server.deps.db, [
      { id: PUBLIC_ID, name: 'Public, hosted', owner_id: owner.user.id, visibility: 'public' },
      { id: PRIVATE_ID, name: 'Private, hosted', owner_id: owner.user.id, visibility: 'private' },
    ]);
    gitIn(work, 'init', '-q');
    writeFileSync(path.join(work, 'README'), 'x\n');
    gitIn(work, 'add', 'README');
    gitIn(work, 'commit', '-q', '-m', 'first');
    for (const id of [PUBLIC_ID, PRIVATE_ID]) {
      const u = new URL(`${server.url}/git/${id}.git`);
      [u.username, u.password] = ['nds', owner.key];
      const pushed = await gitRun(work, 'push', '-q', u.toString(), 'main');
      assert.equal(pushed.status, 0, pushed.stderr);
    }
  });
  after(async () => {
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('a signed-in stranger of a public dataset: the encoded service is refused as the plain one (403)', async () => {
    const plain = await refs(PUBLIC_ID, 'service=git-receive-pack', basic(stranger.key));
    assert.deepEqual(plain, { status: 403, receivePackAdvertised: false });
    assert.deepEqual(await refs(PUBLIC_ID, 'service=git%2Dreceive-pack', basic(stranger.key)), plain);
  });

  it('an anonymous caller of a public dataset: the encoded service gets the challenge of the plain one (401)', async () => {
    const plain = await refs(PUBLIC_ID, 'service=git-receive-pack');
    assert.deepEqual(plain, { status: 401, receivePackAdvertised: false });
    assert.deepEqual(await refs(PUBLIC_ID, 'service=git%2dreceive-pack'), plain);
  });

  it('the POST that carries a pack is judged by its path: refused to the stranger whatever the query', async () => {
    const res = await fetch(`${server.url}/git/${PUBLIC_ID}.git/git-receive-pack?service=git%2Dupload-pack`, {
      method: 'POST',
      headers: { authorization: basic(stranger.key), 'content-type': 'application/x-git-receive-pack-request' },
      body: '0000',
    });
    await res.body?.cancel();
    assert.equal(res.status, 403);
  });

  it("a worker's fetch credential of a private dataset: refused for the encoded service as for the plain one (401)", async () => {
    const credential = signGitFetchCredential(server.config, PRIVATE_ID, server.clock.now());
    const plain = await refs(PRIVATE_ID, 'service=git-receive-pack', `Bearer ${credential}`);
    assert.deepEqual(plain, { status: 401, receivePackAdvertised: false });
    assert.deepEqual(await refs(PRIVATE_ID, 'service=git%2Dreceive-pack', `Bearer ${credential}`), plain);
  });
});
