import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { startTestServer, usingPostgres } from './support/test-server.js';

describe('server lifecycle', () => {
  it('close lets an in-flight request finish, then refuses new connections', async () => {
    const server = await startTestServer();
    // A slow request: a body that arrives in two parts, the second only after close() has begun. On a
    // connection of its own (agent: false), closed after its answer: a kept-alive idle connection would hold
    // close() up to its 5 s limit, which is not what this test is about.
    const { request } = await import('node:http');
    let sendRest!: () => void;
    let connected!: () => void;
    const isConnected = new Promise<void>((resolve) => (connected = resolve));
    const inFlight = new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}/auth/device/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.on('socket', (socket) => socket.once('connect', connected));
      req.write('{"machine_name":');
      sendRest = () => req.end('"slow"}');
    });
    // Connected and given time to be accepted by the server (generous: CI machines can be loaded).
    await isConnected;
    await new Promise((r) => setTimeout(r, 200));
    const closing = server.close();
    setTimeout(sendRest, 100);
    assert.equal(await inFlight, 200);
    await closing;
    await assert.rejects(fetch(`${server.url}/healthz`));
  });

  it('serves its OpenAPI description with the routes of the spec', async () => {
    const server = await startTestServer();
    try {
      const doc = await (await fetch(`${server.url}/openapi.json`)).json();
      for (const p of ['/auth/device/start', '/auth/device/token', '/auth/device/lookup', '/auth/device/confirm', '/auth/device/deny', '/auth/keys', '/auth/keys/current', '/auth/keys/{id}', '/auth/login', '/users/me', '/admin/users', '/admin/users/{username}/kind', '/admin/users/{username}/keys']) {
        assert.ok(doc.paths[p], `${p} is documented`);
      }
    } finally {
      await server.close();
    }
  });

  it('answers unknown routes with the general error body', async () => {
    const server = await startTestServer();
    try {
      const res = await fetch(`${server.url}/no/such/route`);
      assert.equal(res.status, 404);
      const body = await res.json();
      assert.equal(body.error, 'not_found');
      assert.ok(Array.isArray(body.details));
      const bad = await fetch(`${server.url}/auth/keys`, { method: 'POST', headers: { authorization: 'Basic abc' } });
      assert.equal(bad.status, 401);
    } finally {
      await server.close();
    }
  });

  it('survives the database server terminating its idle connections (PostgreSQL server only)', { skip: usingPostgres ? false : 'needs the PostgreSQL server (NDS_TEST_DB=postgres)' }, async () => {
    const server = await startTestServer();
    try {
      assert.equal((await fetch(`${server.url}/openapi.json`)).status, 200);
      const { name } = (await sql<{ name: string }>`select current_database() as name`.execute(server.deps.db)).rows[0]!;
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      const { rowCount } = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
      await admin.end();
      assert.ok((rowCount ?? 0) > 0, 'the server had connections to terminate');
      await new Promise((r) => setTimeout(r, 200));
      // The pool replaced what was terminated: the next requests are served as usual.
      const res = await fetch(`${server.url}/auth/device/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(res.status, 200);
    } finally {
      await server.close();
    }
  });
});
