/**
 * `source_repo` end to end (docs/datasets.md, docs/security.md): a client cannot point a dataset at a path
 * of the server, a file:// URL, another dataset's repository or a loopback address (400, with the reason),
 * and a row stored under the old rule is refused when it is converted, with the reason shown to its owner:
 * a stranger's dataset pointed at a victim's private hosted repository never serves the victim's recordings,
 * and the server never connects to a loopback address named there.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { hostedSource, hostRepository, makeBidsRepo } from '../conversion/support.js';

describe('source_repo rules', () => {
  let server: TestServer;
  let admin: TestAccount;
  let victim: TestAccount;
  let attacker: TestAccount;
  let victimRepo: string;
  let listener: Server;
  let port: number;
  let connections = 0;
  const victimId = 'nd000401';
  const attackerId = 'nd000402';

  before(async () => {
    server = await startTestServer({ env: { SOURCE_REPO_HOSTS: 'github.com,127.0.0.1' } });
    admin = await createAccount(server, { role: 'admin' });
    victim = await createAccount(server);
    attacker = await createAccount(server);
    victimRepo = hostRepository(server.config.gitDir, victimId, makeBidsRepo());
    await insertDatasetRows(server.deps.db, [
      { id: victimId, name: 'Victim', owner_id: victim.user.id, visibility: 'private', source_repo: hostedSource },
      { id: attackerId, name: 'Attacker', owner_id: attacker.user.id, visibility: 'private' },
    ]);
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  after(async () => {
    await server?.close();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
    rmSync(victimRepo, { recursive: true, force: true });
  });

  const patch = (account: TestAccount, id: string, sourceRepo: string | null) =>
    account.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ source_repo: sourceRepo }) });

  async function regenerate(id: string): Promise<{ zarr_status: string; zarr_error: string | null }> {
    const r = await admin.api(`/admin/datasets/${id}/zarr/regenerate`, { method: 'POST', body: JSON.stringify({ full: true }) });
    assert.equal(r.status, 202, await r.text());
    await server.worker!.idle();
    return (await (await attacker.api(`/datasets/${id}`)).json()) as { zarr_status: string; zarr_error: string | null };
  }

  it("converts the victim's hosted repository (the control)", async () => {
    const r = await admin.api(`/admin/datasets/${victimId}/zarr/regenerate`, { method: 'POST', body: JSON.stringify({ full: true }) });
    assert.equal(r.status, 202);
    await server.worker!.idle();
    const d = (await (await victim.api(`/datasets/${victimId}`)).json()) as { zarr_status: string; zarr_store_count: number; hosted_repo: boolean; source_repo: string; git_url: string };
    assert.equal(d.zarr_status, 'ready');
    assert.equal(d.zarr_store_count, 2);
    assert.equal(d.hosted_repo, true);
    assert.equal(d.source_repo, d.git_url);
  });

  it('answers 400 with the reason to a path, a file:// URL, another dataset\'s repository, a loopback address, plain http', async () => {
    const cases: Array<[string, RegExp]> = [
      [repositoryDir(server.config.gitDir, victimId), /a path is not a source repository/],
      [`file://${repositoryDir(server.config.gitDir, victimId)}`, /a file:\/\/ URL is not a source repository/],
      [`${server.url}/git/${victimId}.git`, new RegExp(`not the dataset's own; its own is ${server.url}/git/${attackerId}\\.git`)],
      [`https://127.0.0.1:${port}/o/n.git`, /127\.0\.0\.1 is not a public address/],
      [`https://localhost:${port}/o/n.git`, /localhost is not a host this server fetches repositories from/],
      ['http://github.com/o/n.git', /only https URLs are fetched/],
    ];
    for (const [value, reason] of cases) {
      const r = await patch(attacker, attackerId, value);
      const body = (await r.json()) as { error: string; message: string; details: string[] };
      assert.equal(r.status, 400, value);
      assert.equal(body.error, 'validation_failed');
      assert.match(body.message, reason, value);
    }
    const created = await attacker.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'x', source_repo: repositoryDir(server.config.gitDir, victimId) }) });
    assert.equal(created.status, 400);
    const d = (await (await attacker.api(`/datasets/${attackerId}`)).json()) as { source_repo: string | null };
    assert.equal(d.source_repo, null, 'a refused value was stored');
    assert.equal(connections, 0);
  });

  it("takes an https URL of an allowed host, and the dataset's own repository URL as its hosted repository", async () => {
    const remote = (await (await patch(attacker, attackerId, 'https://github.com/o/n.git')).json()) as { source_repo: string; hosted_repo: boolean };
    assert.deepEqual([remote.source_repo, remote.hosted_repo], ['https://github.com/o/n.git', false]);
    const own = (await (await patch(attacker, attackerId, `${server.url}/git/${attackerId}.git`)).json()) as { source_repo: string; hosted_repo: boolean; git_url: string };
    assert.equal(own.hosted_repo, true);
    assert.equal(own.source_repo, own.git_url);
    const row = await server.deps.db.selectFrom('datasets').select('source_repo').where('id', '=', attackerId).executeTakeFirstOrThrow();
    assert.equal(row.source_repo, 'hosted', 'the hosted repository is stored by a marker, never a path');
    assert.equal((await patch(attacker, attackerId, null)).status, 200);
  });

  it("refuses at conversion a row stored under the old rule naming the victim's repository, and tells the owner why", async () => {
    for (const [value, reason] of [
      [repositoryDir(server.config.gitDir, victimId), /^The source repository is refused: a path is not a source repository/],
      [`file://${repositoryDir(server.config.gitDir, victimId)}`, /^The source repository is refused: a file:\/\/ URL/],
      [`${server.url}/git/${victimId}.git`, /^The source repository is refused: names a repository of this server that is not the dataset's own/],
    ] as const) {
      await server.deps.db.updateTable('datasets').set({ source_repo: value }).where('id', '=', attackerId).execute();
      const d = await regenerate(attackerId);
      assert.equal(d.zarr_status, 'failed', value);
      assert.match(d.zarr_error ?? '', reason);
      assert.ok(!(d.zarr_error ?? '').includes(server.config.gitDir), 'the reason names a folder of the server');
      const listed = (await (await attacker.api(`/datasets/${attackerId}/recordings`)).json()) as { recordings: unknown[] };
      assert.deepEqual(listed.recordings, [], "the victim's recordings are served");
    }
    // The dataset page tells its owner too.
    const session = await createBrowserSession(server, attacker.user);
    const page = await (await session.fetch(`/datasets/${attackerId}`, { headers: { accept: 'text/html' } })).text();
    assert.match(page, /The conversion failed<\/h2><p>The source repository is refused: names a repository of this server/);
  });

  it('refuses at conversion a row naming a loopback address, before any connection opens', async () => {
    const outcomes = new Map<string, { zarr_status: string; zarr_error: string | null }>();
    for (const value of [`https://127.0.0.1:${port}/o/n.git`, `http://127.0.0.1:${port}/o/n.git`, `https://[::ffff:127.0.0.1]:${port}/o/n.git`]) {
      await server.deps.db.updateTable('datasets').set({ source_repo: value }).where('id', '=', attackerId).execute();
      outcomes.set(value, await regenerate(attackerId));
    }
    assert.equal(connections, 0, 'the server connected to a loopback address');
    for (const [value, d] of outcomes) {
      assert.equal(d.zarr_status, 'failed', value);
      assert.match(d.zarr_error ?? '', /^The source repository is refused: /, value);
    }
  });
});
