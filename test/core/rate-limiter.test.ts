/**
 * The rate-limit service, the same suite on each store: this process's memory, the database (PGlite in the
 * embedded pass, the PostgreSQL server in the PostgreSQL pass: `usingPostgres`) and Redis (a server of the
 * test's own). What every limit relies on: a key gets its points per window and no more, a refusal costs
 * nothing, a point given back is as if never spent, windows follow the injected clock, and attempts racing
 * from several processes (several connections) pass the limit no more than one process does.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { isNdsError } from '../../src/core/errors.js';
import { MemoryLimitStore } from '../../src/core/memory-limit-store.js';
import { RateLimits, spendAll, type LimitStore } from '../../src/core/rate-limiter.js';
import { RedisLimitStore } from '../../src/core/redis-limit-store.js';
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { DatabaseLimitStore } from '../../src/db/rate-limit-store.js';
import { limitFailures } from '../../src/accounts/sign-in-limits.js';
import { OwnRedis } from '../support/own-redis.js';
import { createPostgresTestDatabase, freePort, pgliteDump, usingPostgres, type PostgresTestDatabase } from '../support/test-server.js';

const MINUTE = 60_000;

/** A store under test: made fresh for each test, and a second handle on the same counts (another process). */
interface StoreKind {
  name: string;
  open(): Promise<{ store: LimitStore; other?: LimitStore; rows?: () => Promise<string[]> }>;
  close?(): Promise<void>;
}

function refusal(err: unknown): number {
  assert.ok(isNdsError(err, 'rate_limited'), `expected rate_limited, got ${String(err)}`);
  return Number((err as { headers?: Record<string, string> }).headers?.['Retry-After']);
}

const database = (): StoreKind => {
  const handles: DatabaseHandle[] = [];
  const dropped: PostgresTestDatabase[] = [];
  return {
    name: usingPostgres ? 'the PostgreSQL server' : 'PGlite',
    async open() {
      if (usingPostgres) {
        const created = await createPostgresTestDatabase();
        dropped.push(created);
        // Two pools on one database: two server processes.
        const a = await connectDatabase(created.url);
        const b = await connectDatabase(created.url);
        handles.push(a, b);
        const rows = async () => (await a.db.selectFrom('rate_limits').select('key').execute()).map((r) => r.key);
        return { store: new DatabaseLimitStore(a.db), other: new DatabaseLimitStore(b.db), rows };
      }
      const a = await connectDatabase('pglite:memory', { pgliteDump: await pgliteDump() });
      handles.push(a);
      const rows = async () => (await a.db.selectFrom('rate_limits').select('key').execute()).map((r) => r.key);
      return { store: new DatabaseLimitStore(a.db), rows };
    },
    async close() {
      for (const h of handles) await h.close();
      for (const d of dropped) await d.drop();
    },
  };
};

const redis = (): StoreKind => {
  let server: OwnRedis;
  let dir: string;
  const stores: RedisLimitStore[] = [];
  let n = 0;
  return {
    name: 'Redis',
    async open() {
      if (!server) {
        dir = await mkdtemp(path.join(os.tmpdir(), 'nds-rl-redis-'));
        server = new OwnRedis(await freePort(), dir);
        await server.start();
      }
      const prefix = `t${n++}:`;
      // This server syncs every write to disk (`appendfsync always`): under CI's load (a 6 GiB upload beside this
      // pass) a sync took past the store's 500-ms command timeout once. What these tests assert is the counting,
      // not how long a command may take (the fallback on a silent server has tests of its own).
      const a = new RedisLimitStore({ url: server.url, prefix, timeoutMs: 10_000 });
      const b = new RedisLimitStore({ url: server.url, prefix, timeoutMs: 10_000 });
      stores.push(a, b);
      await Promise.all([a.ready(), b.ready()]);
      const rows = () => server.with(async (r) => (await r.keys(`${prefix}*`)).map((k) => k.slice(prefix.length)));
      return { store: a, other: b, rows };
    },
    async close() {
      for (const s of stores) await s.close();
      await server?.kill();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
};

const memory: StoreKind = { name: 'memory', open: async () => ({ store: new MemoryLimitStore() }) };

for (const kind of [memory, database(), redis()]) {
  describe(`rate limits counted in ${kind.name}`, { timeout: 60_000 }, () => {
    after(() => kind.close?.());

    async function service(): Promise<{ limits: RateLimits; other?: RateLimits; clock: ManualClock; rows?: () => Promise<string[]> }> {
      const clock = new ManualClock();
      const opened = await kind.open();
      return { limits: new RateLimits(opened.store, clock), other: opened.other && new RateLimits(opened.other, clock), clock, rows: opened.rows };
    }

    it('lets a key spend its points in a window, then refuses with Retry-After until the window ends', async () => {
      const { limits, clock } = await service();
      const codes = limits.limiter({ name: 'codes', points: 3, durationMs: 15 * MINUTE });
      for (let i = 0; i < 3; i++) await codes.spend('alice@example.org');
      clock.advance(5 * MINUTE);
      const retryAfter = await codes.spend('alice@example.org').then(() => assert.fail('a fourth point was spent'), refusal);
      assert.ok(retryAfter > 9 * 60 && retryAfter <= 10 * 60, `Retry-After ${retryAfter}`);
      // Other keys, and the same key under another limiter, have points of their own.
      await codes.spend('bob@example.org');
      await limits.limiter({ name: 'mails', points: 1, durationMs: MINUTE }).spend('alice@example.org');
      clock.advance(10 * MINUTE + 1000);
      for (let i = 0; i < 3; i++) await codes.spend('alice@example.org');
    });

    it('counts nothing for a refused attempt: refusals do not stretch the window or eat the next one', async () => {
      const { limits, clock } = await service();
      const codes = limits.limiter({ name: 'codes', points: 2, durationMs: MINUTE });
      await codes.spend('k');
      await codes.spend('k');
      for (let i = 0; i < 10; i++) await codes.spend('k').then(() => assert.fail('spent past the limit'), refusal);
      clock.advance(MINUTE);
      await codes.spend('k');
      await codes.spend('k');
      await codes.spend('k').then(() => assert.fail('spent past the limit'), refusal);
    });

    it('takes back a point given back, and a window given back to zero is gone (the next spend opens a new one)', async () => {
      const { limits, clock } = await service();
      const codes = limits.limiter({ name: 'codes', points: 2, durationMs: 10 * MINUTE });
      await (await codes.spend('k')).giveBack();
      clock.advance(9 * MINUTE);
      // Had the window of the first spend stayed, it would end in a minute.
      await codes.spend('k');
      await codes.spend('k');
      const retryAfter = await codes.spend('k').then(() => assert.fail('spent past the limit'), refusal);
      assert.ok(retryAfter > 9 * 60, `a new window of 10 minutes, Retry-After ${retryAfter}`);
    });

    it('leaves a later window alone when a point of an ended one is given back', async () => {
      const { limits, clock } = await service();
      const codes = limits.limiter({ name: 'codes', points: 2, durationMs: MINUTE });
      const old = await codes.spend('k');
      clock.advance(MINUTE + 1);
      await codes.spend('k');
      await codes.spend('k');
      await old.giveBack();
      await codes.spend('k').then(() => assert.fail('the old point came off the new window'), refusal);
    });

    it('keeps the store free of the keys themselves (it sees their SHA-256 under the limiter name)', async (t) => {
      const { limits, rows } = await service();
      if (!rows) return t.skip('memory keeps no rows to look at');
      await limits.limiter({ name: 'sign-in.mail-per-address', points: 5, durationMs: MINUTE }).spend('Secret.Person@example.org');
      const keys = await rows();
      assert.equal(keys.length, 1);
      assert.match(keys[0], /^sign-in\.mail-per-address:[0-9a-f]{64}$/);
    });

    it('spends all of several limits or none', async () => {
      const { limits } = await service();
      const perAddress = limits.limiter({ name: 'per-address', points: 1, durationMs: MINUTE });
      const perIp = limits.limiter({ name: 'per-ip', points: 5, durationMs: MINUTE });
      await spendAll([[perAddress, 'a'], [perIp, '192.0.2.1']]);
      await spendAll([[perAddress, 'a'], [perIp, '192.0.2.1']]).then(() => assert.fail('spent past the limit'), refusal);
      // The refused pair gave back the IP's point: four more addresses from that IP pass, the fifth does not.
      for (const address of ['b', 'c', 'd', 'e']) await spendAll([[perAddress, address], [perIp, '192.0.2.1']]);
      await spendAll([[perAddress, 'f'], [perIp, '192.0.2.1']]).then(() => assert.fail('spent past the IP limit'), refusal);
      await perAddress.spend('f');
    });

    it('keeps the point of a failed attempt and gives back the point of one that succeeded or failed otherwise', async () => {
      const { limits } = await service();
      const failures = limits.limiter({ name: 'failures', points: 2, durationMs: MINUTE });
      const wrong = Object.assign(new Error('wrong code'), { wrong: true });
      const isWrong = (err: unknown) => (err as { wrong?: boolean }).wrong === true;
      for (let i = 0; i < 5; i++) assert.equal(await limitFailures([[failures, 'k']], isWrong, async () => 'signed in'), 'signed in');
      await assert.rejects(limitFailures([[failures, 'k']], isWrong, async () => Promise.reject(new Error('database down'))), /database down/);
      await assert.rejects(limitFailures([[failures, 'k']], isWrong, async () => Promise.reject(wrong)), /wrong code/);
      await assert.rejects(limitFailures([[failures, 'k']], isWrong, async () => Promise.reject(wrong)), /wrong code/);
      let ran = false;
      await limitFailures([[failures, 'k']], isWrong, async () => (ran = true)).then(() => assert.fail('a third try after two failures'), refusal);
      assert.equal(ran, false, 'the attempt past the limit never runs');
    });

    it('lets no more than the limit through when attempts race, from one process or two', async () => {
      const { limits, other } = await service();
      const a = limits.limiter({ name: 'race', points: 20, durationMs: MINUTE });
      // Where the store has a second handle (a second pool, a second connection), half the tries go through it.
      const b = other ? other.limiter({ name: 'race', points: 20, durationMs: MINUTE }) : a;
      const tries = Array.from({ length: 60 }, (_, i) => (i % 2 ? b : a).spend('198.51.100.7').then(() => 'spent', (err) => (refusal(err), 'refused')));
      const outcomes = await Promise.all(tries);
      assert.equal(outcomes.filter((o) => o === 'spent').length, 20);
    });
  });
}

describe('the rate-limit service', () => {
  it('refuses a second limiter of the same name, and names that do not fit a store key', () => {
    const limits = new RateLimits(new MemoryLimitStore(), new ManualClock());
    limits.limiter({ name: 'sign-in.codes', points: 1, durationMs: MINUTE });
    assert.throws(() => limits.limiter({ name: 'sign-in.codes', points: 2, durationMs: MINUTE }), /already defined/);
    assert.throws(() => limits.limiter({ name: 'Has Spaces', points: 2, durationMs: MINUTE }), /lower-case/);
  });
});
