/**
 * A node forwards a hosted repository's requests to the node holding it, marked as forwarded; a marked request
 * that reaches a node which does not hold the repository either is refused with an error-level alarm ("an
 * administrator must check NODE_URL") instead of being passed on in a loop. Only a node can set that mark: a
 * client that sends the header itself must be answered as any client, or it could raise the alarm at will
 * (false alarms, a `from` of its choosing in the log) and be refused service. The holder here is a stand-in
 * HTTP server (the network edge); the node that disagrees is this node reached under another name.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, beforeEach, describe, it } from 'node:test';
import { FORWARDED_HEADER } from '../../src/git/forward-to-node.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ID = 'nd000614';

describe('the forwarding marker between nodes', () => {
  let server: TestServer;
  let holder: Server;
  let holderUrl: string;
  const holderSaw: IncomingHttpHeaders[] = [];
  const logged: Array<Record<string, unknown>> = [];
  const errorsLogged = () => logged.filter((l) => (l.level as number) >= 50);
  const refs = () => `${server.url}/git/${ID}.git/info/refs?service=git-upload-pack`;
  const recordHolder = (nodeUrl: string) => server.deps.db.updateTable('repository_holders').set({ node_url: nodeUrl }).where('dataset_id', '=', ID).execute();

  before(async () => {
    holder = createServer((req, res) => {
      holderSaw.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('the holder answered');
    });
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    holderUrl = `http://127.0.0.1:${(holder.address() as AddressInfo).port}`;
    const log = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) logged.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    server = await startTestServer({ env: { LOG_LEVEL: 'warn' }, logDestination: log });
    const owner = await createAccount(server);
    await insertDatasetRows(server.deps.db, { id: ID, name: 'Public, held by another node', owner_id: owner.user.id, visibility: 'public' });
    await server.deps.db.insertInto('repository_holders').values({ dataset_id: ID, node_url: holderUrl, created_at: new Date() }).execute();
  });
  after(async () => {
    await server?.close();
    await new Promise((resolve) => holder?.close(resolve));
  });
  beforeEach(() => {
    logged.length = 0;
    holderSaw.length = 0;
  });

  it('answers a client that sends the marker itself as any client: forwarded to the holder, and no alarm', async () => {
    await recordHolder(holderUrl);
    for (const forged of ['http://attacker.example/any text', `${server.config.nodeUrl} ${'0'.repeat(64)}`, server.config.nodeUrl]) {
      const res = await fetch(refs(), { headers: { [FORWARDED_HEADER]: forged } });
      assert.deepEqual({ status: res.status, body: await res.text(), errors: errorsLogged().map((e) => e.msg) }, { status: 200, body: 'the holder answered', errors: [] }, forged);
    }
    // The holder was told which node sent each request, by this node, not in the client's words.
    assert.equal(holderSaw.length, 3);
    for (const headers of holderSaw) assert.ok(String(headers[FORWARDED_HEADER]).startsWith(`${server.config.nodeUrl} `), String(headers[FORWARDED_HEADER]));
  });

  it('refuses, with the alarm, a request forwarded by a node to a node that does not hold the repository', async () => {
    // The holder is recorded under a name of this very node that is not its NODE_URL: it forwards to itself.
    const otherName = new URL(server.config.nodeUrl);
    otherName.hostname = otherName.hostname === '127.0.0.1' ? 'localhost' : '127.0.0.1';
    await recordHolder(otherName.toString().replace(/\/$/, ''));
    try {
      const res = await fetch(refs());
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { error: string }).error, 'repository_unavailable');
      assert.deepEqual(
        errorsLogged().map((e) => ({ msg: e.msg, from: e.from })),
        [{ msg: 'a forwarded request reached a node that does not hold the repository', from: server.config.nodeUrl }],
      );
    } finally {
      await recordHolder(holderUrl);
    }
  });
});
