/**
 * What the storage quota costs an upload (decision 0051): `POST /datasets/:id/upload-urls` for 64 new files,
 * which grants their room in one transaction under the owner's lock, timed beside the bare `GET /users/me`
 * of the same server, with the owner's datasets holding no grant and then `--grants` of them (inserted as SQL).
 * Also times what a reservation would cost if it summed the grants themselves instead of reading the
 * per-dataset sums the trigger keeps. Goal: the same upload-urls time at a million grants as at none.
 * Run: node --import tsx bench/quota.ts [--database-url postgres://.../an-empty-database] [--grants 1000000] [--requests 200]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { mintApiKey } from '../src/accounts/api-keys.js';
import { createUser } from '../src/accounts/users.js';
import { loadConfig } from '../src/core/config.js';
import { reserveStorage } from '../src/datasets/storage-quota.js';
import { createLogger } from '../src/core/log.js';
import { startServer } from '../src/server.js';
import { freePort } from '../test/support/test-server.js';
import { option } from './bench-args.js';

const databaseUrl = option('database-url', process.env.BENCH_DATABASE_URL ?? 'pglite:memory');
const grants = Number(option('grants', databaseUrl.startsWith('pglite') ? '200000' : '1000000'));
const requests = Number(option('requests', '200'));

const work = await mkdtemp(join(tmpdir(), 'nds-bench-quota-'));
const port = await freePort();
const config = loadConfig({ PORT: String(port), DATA_DIR: join(work, 'data'), DATABASE_URL: databaseUrl, OBJECT_STORE_URL: `file:${join(work, 'objects')}`, LOG_LEVEL: 'silent', IN_PROCESS_WORKER: 'false' });
const server = await startServer({ config, hostname: '127.0.0.1', log: createLogger('silent') });
const db = server.deps.db;

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
async function timed(label: string, send: () => Promise<Response | void>): Promise<{ label: string; p50: number; p95: number }> {
  const once = async () => {
    const res = await send();
    if (!res) return;
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${label}: HTTP ${res.status}`);
  };
  for (let i = 0; i < 10; i++) await once();
  const ms: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    await once();
    ms.push(performance.now() - started);
  }
  return { label, p50: percentile(ms, 0.5), p95: percentile(ms, 0.95) };
}

try {
  const user = await createUser(db, { username: 'bench', email: 'bench@example.org', status: 'approved' }, new Date());
  // A limit of the account's own, so that every reservation reads what the account holds and checks it.
  await db.updateTable('users').set({ sandbox_completed_at: new Date(), storage_quota_bytes: 2 ** 52 }).where('id', '=', user.id).execute();
  const { apiKey } = await mintApiKey(db, user.id, 'bench', 'admin');
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const base = `http://127.0.0.1:${port}`;
  const created = await fetch(`${base}/datasets`, { method: 'POST', headers, body: JSON.stringify({ name: 'quota bench' }) });
  const { id } = (await created.json()) as { id: string };
  const me = () => fetch(`${base}/users/me`, { headers });
  const urls = () =>
    fetch(`${base}/datasets/${id}/upload-urls`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ files: Array.from({ length: 64 }, (_, i) => ({ path: `f${i}.bin`, size: 1_000_000, sha256: randomBytes(32).toString('hex') })) }),
    });

  /** The reservation alone, as upload-urls makes it: 64 new keys in one transaction under the owner's lock. */
  const reserve = () => reserveStorage(server.deps, id, Array.from({ length: 64 }, () => ({ key: `objects/${randomBytes(32).toString('hex')}`, bytes: 1_000_000 })), { expiresAt: new Date(Date.now() + 3600_000) }).then(() => undefined);
  const rows = [await timed('GET /users/me (baseline)', me), await timed('POST upload-urls, 64 new files, ~0 grants', urls), await timed('the reservation alone (reserveStorage, 64 keys), ~0 grants', reserve)];
  const filling = performance.now();
  // 100,000 a statement: each stays within the server's statement timeout.
  for (let from = 1; from <= grants; from += 100_000) {
    await sql`
      insert into storage_grants (dataset_id, object_key, bytes, confirmed, expires_at)
      select ${id}, 'objects/' || md5(i::text) || md5((i + 1)::text), 1000, true, now() from generate_series(${from}::int, ${Math.min(grants, from + 99_999)}::int) i`.execute(db);
  }
  const filledS = (performance.now() - filling) / 1000;
  rows.push(await timed(`POST upload-urls, 64 new files, ${grants.toLocaleString('en')} grants`, urls));
  rows.push(await timed(`the reservation alone (reserveStorage, 64 keys), ${grants.toLocaleString('en')} grants`, reserve));
  rows.push(await timed('GET /users/me (baseline, again)', me));
  const summing = performance.now();
  await sql`select sum(bytes)::bigint from storage_grants where dataset_id = ${id}`.execute(db);
  const sumMs = performance.now() - summing;

  console.log(`Storage quota: upload-urls with its reservation, ${databaseUrl.startsWith('pglite') ? 'PGlite' : 'PostgreSQL'}, ${requests} sequential requests each`);
  console.log('| request | p50 | p95 |');
  console.log('|---|---:|---:|');
  for (const r of rows) console.log(`| ${r.label} | ${r.p50.toFixed(2)} ms | ${r.p95.toFixed(2)} ms |`);
  console.log(`${grants.toLocaleString('en')} grants inserted (the trigger keeping the dataset's sum) in ${filledS.toFixed(1)} s; summing them instead of reading the sum: ${sumMs.toFixed(1)} ms a reservation`);
} finally {
  await server.close();
  await rm(work, { recursive: true, force: true });
}
