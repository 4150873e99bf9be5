/**
 * The server on a PostgreSQL server whose backends an administrator terminates, again and again, while eight
 * clients write and read through the API: the process stays up, every answer is a success or a 503 with
 * Retry-After (never a 500), requests succeed again within 5 s of each termination, and every write that was
 * acknowledged is there at the end. PGlite has one in-process connection that cannot be lost: this file runs
 * in the suite's PostgreSQL pass (NDS_TEST_DB=postgres, see scripts/test.sh) and says so when skipped.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';

const onPostgres = usingPostgres ? {} : { skip: 'needs the PostgreSQL server: runs in the PostgreSQL pass (NDS_TEST_DB=postgres TEST_DATABASE_URL=...)' };

const CLIENTS = 8;
const TERMINATIONS = 12;
const RECOVERY_MS = 5000;

interface Answer {
  started: number;
  ended: number;
  status: number;
  retryAfter: string | null;
  what: string;
}

describe('database connection loss on the PostgreSQL server', onPostgres, () => {
  let server: TestServer;
  let admin: TestAccount;
  let terminator: pg.Client;
  let dbName: string;

  before(async () => {
    server = await startTestServer();
    admin = await createAccount(server, { role: 'admin' });
    dbName = new URL(server.config.databaseUrl).pathname.slice(1);
    terminator = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await terminator.connect();
  });
  after(async () => {
    await terminator?.query(`alter database ${dbName} with allow_connections true`).catch(() => {});
    await terminator?.end();
    await server?.close();
  });

  /** Terminates every backend of the server's database; returns how many there were. */
  async function terminateBackends(): Promise<number> {
    const { rows } = await terminator.query<{ n: number }>(
      'select count(*)::int as n from (select pg_terminate_backend(pid) as gone from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()) t where gone',
      [dbName],
    );
    return rows[0].n;
  }

  it('stays up, answers 503 (never 500) while connections die, recovers within 5 s each time, and loses no acknowledged write', async (t) => {
    const answers: Answer[] = [];
    const acknowledged = new Map<string, string>();
    let stop = false;

    async function call(what: string, path: string, init?: RequestInit): Promise<Response> {
      const started = performance.now();
      const res = await admin.api(path, init);
      answers.push({ started, ended: performance.now(), status: res.status, retryAfter: res.headers.get('retry-after'), what });
      return res;
    }

    async function client(n: number): Promise<void> {
      for (let i = 0; !stop; i++) {
        const name = `client ${n} write ${i}`;
        const created = await call('create', '/datasets', { method: 'POST', body: JSON.stringify({ name }) });
        const body = (await created.json()) as { id?: string };
        if (created.status === 201) acknowledged.set(body.id!, name);
        const ids = [...acknowledged.keys()];
        if (ids.length > 0) await (await call('read', `/datasets/${ids[(i * 7 + n) % ids.length]}`)).arrayBuffer();
        await (await call('list', '/users/me/datasets?limit=5')).arrayBuffer();
      }
    }

    const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));
    const terminations: Array<{ at: number; backends: number }> = [];
    try {
      for (let k = 0; k < TERMINATIONS; k++) {
        await new Promise((r) => setTimeout(r, 400));
        const at = performance.now();
        terminations.push({ at, backends: await terminateBackends() });
      }
      // Time for the last recovery to show.
      await new Promise((r) => setTimeout(r, 1000));
    } finally {
      stop = true;
      await Promise.all(clients);
    }

    // The connections were really cut, and the clients were really working.
    assert.ok(terminations.filter((t) => t.backends > 0).length >= 10, `backends terminated: ${terminations.map((t) => t.backends).join(', ')}`);
    assert.ok(acknowledged.size >= 20, `only ${acknowledged.size} writes acknowledged`);

    const unexpected = answers.filter((a) => a.status !== 200 && a.status !== 201 && a.status !== 503);
    assert.deepEqual(unexpected.map((a) => `${a.what} ${a.status}`), [], 'every answer is a success or a 503');
    for (const a of answers.filter((x) => x.status === 503)) assert.match(a.retryAfter ?? '', /^\d+$/, 'a 503 says when to retry');

    const recoveries: number[] = [];
    for (const cut of terminations) {
      const recovered = answers.filter((a) => a.started >= cut.at && a.status < 300).sort((a, b) => a.ended - b.ended)[0];
      assert.ok(recovered, `no request succeeded after the termination at ${cut.at.toFixed(0)} ms`);
      recoveries.push(recovered.ended - cut.at);
      assert.ok(recovered.ended - cut.at <= RECOVERY_MS, `requests succeeded again only ${(recovered.ended - cut.at).toFixed(0)} ms after a termination`);
    }
    t.diagnostic(
      `${terminations.length} terminations (backends ${terminations.map((x) => x.backends).join(',')}), ${answers.length} answers, ` +
        `${answers.filter((a) => a.status === 503).length} of them 503 (${["create","read","list"].map((w) => w + " " + answers.filter((a) => a.status === 503 && a.what === w).length).join(", ")}), ${acknowledged.size} writes acknowledged, slowest recovery ${Math.max(...recoveries).toFixed(0)} ms`,
    );

    // Every acknowledged write is in the database, as acknowledged.
    const rows = await server.deps.db.selectFrom('datasets').select(['id', 'name']).where('id', 'in', [...acknowledged.keys()]).execute();
    assert.equal(rows.length, acknowledged.size);
    for (const r of rows) assert.equal(r.name, acknowledged.get(r.id));

    const health = await fetch(`${server.url}/healthz`);
    assert.deepEqual(await health.json(), { ok: true, database: 'up' });
  });

  it('answers 503 with Retry-After, and /readyz 503, while the database refuses connections; ready again when it accepts them', async () => {
    await terminator.query(`alter database ${dbName} with allow_connections false`);
    await terminateBackends();
    try {
      const res = await admin.api('/users/me/datasets');
      assert.equal(res.status, 503);
      assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
      assert.equal(((await res.json()) as { error: string }).error, 'service_unavailable');
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), { ready: false, database: 'down' });
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200, '/healthz answers while the process lives');
      assert.deepEqual(await health.json(), { ok: true, database: 'down' });
    } finally {
      await terminator.query(`alter database ${dbName} with allow_connections true`);
    }
    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { ready: true, database: 'up' });
    assert.equal((await admin.api('/users/me/datasets')).status, 200);
  });
});
