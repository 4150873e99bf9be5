/**
 * Rate limits while their store is down: with Redis killed or hung, or the PostgreSQL database refusing
 * connections, every limit still holds, counted in this process's memory, answered at once (a hung store costs
 * one timeout, then nothing), and the outage is logged once. When the store is back, counts go there again,
 * its end is logged once, and what a client spent in memory meanwhile still counts until its window ends.
 * The database case runs in the PostgreSQL pass (`usingPostgres`); PGlite lives in the process and cannot go away.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { ManualClock } from '../../src/core/clock.js';
import { isNdsError } from '../../src/core/errors.js';
import { FallbackLimitStore } from '../../src/core/fallback-limit-store.js';
import { createLogger } from '../../src/core/log.js';
import { RateLimits, type LimitStore, type RateLimiter } from '../../src/core/rate-limiter.js';
import { RedisLimitStore } from '../../src/core/redis-limit-store.js';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { DatabaseLimitStore } from '../../src/db/rate-limit-store.js';
import { OwnRedis } from '../support/own-redis.js';
import { createPostgresTestDatabase, freePort, usingPostgres, type PostgresTestDatabase } from '../support/test-server.js';

const MINUTE = 60_000;
const LIMIT = 5;

/** Spends until refused (at most 3 × LIMIT tries): how many points the key got. */
async function pointsUntilRefused(limiter: RateLimiter, key: string): Promise<number> {
  for (let n = 0; n < 3 * LIMIT; n++) {
    try {
      await limiter.spend(key);
    } catch (err) {
      assert.ok(isNdsError(err, 'rate_limited'), `expected rate_limited, got ${String(err)}`);
      return n;
    }
  }
  return Infinity;
}

/** A logger whose lines the test reads. */
function capturedLog(): { log: ReturnType<typeof createLogger>; count(text: string): number } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: createLogger('info', sink), count: (text) => lines.filter((l) => l.includes(text)).length };
}

interface Harness {
  fallback: FallbackLimitStore;
  limiter: RateLimiter;
  clock: ManualClock;
  logged(text: string): number;
}

function harness(shared: LimitStore, what: string): Harness {
  const clock = new ManualClock();
  const { log, count } = capturedLog();
  const fallback = new FallbackLimitStore(shared, { log, what, now: () => clock.now().getTime(), timeoutMs: 300 });
  const limiter = new RateLimits(fallback, clock).limiter({ name: 'sign-in.codes', points: LIMIT, durationMs: 15 * MINUTE });
  return { fallback, limiter, clock, logged: count };
}

/** Moves past the breaker's cool-down and spends on a probe key until the store is used again (10 s at most). */
async function untilBack(h: Harness): Promise<void> {
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    h.clock.advance(1001);
    await h.limiter.spend(`probe-${Date.now()}`);
    if (!h.fallback.degraded) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail('the store was not used again within 10 s of its return');
}

describe('rate limits when Redis fails', { timeout: 60_000 }, () => {
  let redis: OwnRedis;
  let dir: string;
  let store: RedisLimitStore;
  let h: Harness;
  const windowsInRedis = () => redis.with(async (r) => (await r.keys('nds:rl:sign-in.codes:*')).length);

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'nds-rl-fallback-'));
    redis = new OwnRedis(await freePort(), dir);
    await redis.start();
    store = new RedisLimitStore({ url: redis.url, timeoutMs: 200 });
    await store.ready();
    h = harness(store, 'Redis');
  });

  after(async () => {
    await h.fallback.close();
    await redis.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('counts in Redis while it is up', async () => {
    assert.equal(await pointsUntilRefused(h.limiter, 'before@example.org'), LIMIT);
    assert.equal(await windowsInRedis(), 1);
    assert.equal(h.fallback.degraded, false);
  });

  it('with Redis killed, still holds every key to its limit, in memory, and logs the outage once', async () => {
    await redis.kill();
    const started = Date.now();
    assert.equal(await pointsUntilRefused(h.limiter, 'during@example.org'), LIMIT);
    assert.equal(await pointsUntilRefused(h.limiter, 'other@example.org'), LIMIT);
    assert.ok(Date.now() - started < 2000, `answered from memory at once (${Date.now() - started} ms for ${4 * LIMIT} tries)`);
    assert.equal(h.fallback.degraded, true);
    assert.equal(h.logged('rate limits: Redis unavailable'), 1);
  });

  it('back, counts in Redis again, logs it once, and still counts what a key spent in memory meanwhile', async () => {
    await redis.start();
    await untilBack(h);
    assert.equal(h.logged('rate limits: Redis is back'), 1);
    // during@ spent its 5 points in memory: Redis alone would give it 5 more.
    assert.equal(await pointsUntilRefused(h.limiter, 'during@example.org'), 0);
    // A new key is counted in Redis: a second process (a second store) sees its points.
    await h.limiter.spend('after@example.org');
    await h.limiter.spend('after@example.org');
    const otherLimits = new RateLimits(new RedisLimitStore({ url: redis.url }), h.clock);
    try {
      const other = otherLimits.limiter({ name: 'sign-in.codes', points: LIMIT, durationMs: 15 * MINUTE });
      assert.equal(await pointsUntilRefused(other, 'after@example.org'), LIMIT - 2);
    } finally {
      await otherLimits.close();
    }
    // Once the window of the outage has ended, the key is Redis's alone again.
    h.clock.advance(15 * MINUTE);
    assert.equal(await pointsUntilRefused(h.limiter, 'during@example.org'), LIMIT);
  });

  it('with Redis hung, a count waits at most the timeout, and the next ones not at all', async () => {
    redis.signal('SIGSTOP');
    try {
      h.clock.advance(15 * MINUTE);
      let started = Date.now();
      await h.limiter.spend('hung@example.org');
      const first = Date.now() - started;
      assert.ok(first < 1000, `the first count waited ${first} ms`);
      started = Date.now();
      assert.equal(await pointsUntilRefused(h.limiter, 'hung@example.org'), LIMIT - 1);
      assert.ok(Date.now() - started < 200, `the others waited ${Date.now() - started} ms`);
    } finally {
      redis.signal('SIGCONT');
    }
  });
});

describe('rate limits when the PostgreSQL database refuses connections', { timeout: 60_000, ...(usingPostgres ? {} : { skip: 'needs the PostgreSQL server: runs in the PostgreSQL pass (NDS_TEST_DB=postgres TEST_DATABASE_URL=...)' }) }, () => {
  let created: PostgresTestDatabase;
  let database: DatabaseHandle;
  let admin: pg.Client;
  let name: string;
  let h: Harness;
  const rows = async () => Number((await admin.query(`select count(*) from rate_limits`)).rows[0].count);

  before(async () => {
    created = await createPostgresTestDatabase();
    name = new URL(created.url).pathname.slice(1);
    database = await connectDatabase(created.url);
    h = harness(new DatabaseLimitStore(database.db), 'the database');
    admin = new pg.Client({ connectionString: created.url });
    // The test terminates this connection with the others.
    admin.on('error', () => {});
    await admin.connect();
  });

  after(async () => {
    await admin.end();
    await h.fallback.close();
    await database.close();
    await created.drop();
  });

  it('counts in the database while it is up', async () => {
    assert.equal(await pointsUntilRefused(h.limiter, 'before@example.org'), LIMIT);
    assert.equal(await rows(), 1);
  });

  it('with the database refusing connections, still holds every key to its limit, in memory', async () => {
    const root = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await root.connect();
    try {
      await root.query(`alter database ${name} allow_connections false`);
      await root.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
    } finally {
      await root.end();
    }
    assert.equal(await pointsUntilRefused(h.limiter, 'during@example.org'), LIMIT);
    assert.equal(h.fallback.degraded, true);
    assert.equal(h.logged('rate limits: the database unavailable'), 1);
  });

  it('back, counts in the database again and logs it once', async () => {
    const root = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await root.connect();
    await root.query(`alter database ${name} allow_connections true`).finally(() => root.end());
    await untilBack(h);
    assert.equal(h.logged('rate limits: the database is back'), 1);
    assert.equal(await pointsUntilRefused(h.limiter, 'during@example.org'), 0, 'what it spent in memory still counts');
    admin = new pg.Client({ connectionString: created.url });
    await admin.connect();
    const before = await rows();
    await h.limiter.spend('after@example.org');
    assert.equal(await rows(), before + 1);
  });
});
