import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { addVersion } from '../support/versions.js';

async function json(res: Response): Promise<Record<string, any>> {
  return (await res.json()) as Record<string, any>;
}

describe('sandbox training', () => {
  let server: TestServer;
  let trainee: TestAccount;
  let sandboxId: string;

  before(async () => {
    server = await startTestServer();
    trainee = await createAccount(server);
  });
  after(async () => server?.close());

  it('starts not_started, with the next step spelled out', async () => {
    const s = await json(await trainee.api('/sandbox/status'));
    assert.equal(s.status, 'not_started');
    assert.deepEqual(s.datasets, []);
    assert.match(s.next_step, /nds datasets create/);
  });

  it('refuses completion with 409 and a clear message before anything is done', async () => {
    const res = await trainee.api('/sandbox/complete', { method: 'POST' });
    assert.equal(res.status, 409);
    const body = await json(res);
    assert.equal(body.error, 'conflict');
    assert.match(body.message, /not finished: Create a sandbox dataset/);
  });

  it('is in_progress once a sandbox dataset exists; completion still needs a version', async () => {
    const created = await json(await trainee.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'My practice' }) }));
    sandboxId = created.id;
    assert.match(sandboxId, /^sb\d{6}$/);
    const s = await json(await trainee.api('/sandbox/status'));
    assert.equal(s.status, 'in_progress');
    assert.deepEqual(s.datasets.map((d: { id: string }) => d.id), [sandboxId]);
    const res = await trainee.api('/sandbox/complete', { method: 'POST' });
    assert.equal(res.status, 409);
    const body = await json(res);
    assert.match(body.message, /create a version/);
    assert.deepEqual(body.details, [`${sandboxId}: no version yet`]);
  });

  it('waits for a conversion that was started, then completes; real datasets become possible', async () => {
    await addVersion(server, trainee, sandboxId, '0.1.0');
    // The version dispatched a real conversion; its status updates would race the states set by hand below
    // (seen on the PostgreSQL server), so it finishes first.
    await server.worker?.idle();
    await server.deps.db.updateTable('datasets').set({ zarr_status: 'converting' }).where('id', '=', sandboxId).execute();
    const waiting = await trainee.api('/sandbox/complete', { method: 'POST' });
    assert.equal(waiting.status, 409);
    assert.match((await json(waiting)).message, /Zarr copy of .* ready \(now converting\)/);
    await server.deps.db.updateTable('datasets').set({ zarr_status: 'ready' }).where('id', '=', sandboxId).execute();
    const done = await trainee.api('/sandbox/complete', { method: 'POST' });
    assert.equal(done.status, 200);
    const s = await json(done);
    assert.equal(s.status, 'completed');
    assert.ok(Date.parse(s.completed_at));
    assert.equal(s.next_step, null);
    const again = await json(await trainee.api('/sandbox/complete', { method: 'POST' }));
    assert.equal(again.completed_at, s.completed_at, 'completing twice keeps the first time');
    const real = await json(await trainee.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Real one' }) }));
    assert.match(real.id, /^nd\d{6}$/);
  });

  it('reset forgets completion and deletes only the sandbox datasets and their objects', async () => {
    const res = await trainee.api('/sandbox/reset', { method: 'POST' });
    assert.equal(res.status, 200);
    const r = await json(res);
    assert.equal(r.status, 'not_started');
    assert.deepEqual(r.deleted, [sandboxId]);
    // Anything a conversion writes after the reset goes too.
    await server.worker!.idle();
    const left = [];
    for await (const o of server.deps.objects.list(`${sandboxId}/`)) left.push(o.key);
    assert.deepEqual(left, []);
    const owned = await server.deps.db.selectFrom('datasets').select(['id', 'sandbox']).where('owner_id', '=', trainee.user.id).execute();
    assert.deepEqual(owned.map((d) => d.sandbox), [false]);
    const next = await json(await trainee.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Again' }) }));
    assert.match(next.id, /^sb\d{6}$/);
  });

  it('needs a key', async () => {
    assert.equal((await fetch(`${server.url}/sandbox/status`)).status, 401);
  });
});

describe('sandbox dataset cap', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { SANDBOX_DATASETS_MAX: '3' } });
  });
  after(async () => server?.close());

  it('lets 3 of 12 concurrent creations through and refuses the rest with 409; reset frees the slots', async () => {
    const trainee = await createAccount(server);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => trainee.api('/datasets', { method: 'POST', body: JSON.stringify({ name: `practice ${i}` }) })));
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 201, 201, ...Array(9).fill(409)]);
    const refused = await json(answers.find((r) => r.status === 409)!);
    assert.equal(refused.error, 'too_many_sandbox_datasets');
    assert.match(refused.message, /already holds 3 sandbox datasets/);
    const held = await server.deps.db.selectFrom('datasets').select('id').where('sandbox', '=', true).where('owner_id', '=', trainee.user.id).execute();
    assert.equal(held.length, 3);

    // Another account has its own allowance; an admin has none.
    const other = await createAccount(server);
    assert.equal((await other.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'mine' }) })).status, 201);
    const admin = await createAccount(server, { role: 'admin' });
    for (let i = 0; i < 4; i++) assert.equal((await admin.api('/datasets', { method: 'POST', body: JSON.stringify({ name: `a${i}`, sandbox: true }) })).status, 201);

    assert.equal((await trainee.api('/sandbox/reset', { method: 'POST' })).status, 200);
    assert.equal((await trainee.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'again' }) })).status, 201);
  });
});
