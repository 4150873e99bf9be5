/** Helpers of the gateway tests: a dataset with Zarr objects, raw HTTP requests, a standalone gateway. */
import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createUser } from '../../src/accounts/users.js';
import { loadConfig } from '../../src/core/config.js';
import type { Database } from '../../src/db/types.js';
import type { Visibility } from '../../src/db/datasets-tables.js';
import { startGatewayServer, type RunningGateway } from '../../src/gateway-server.js';
import { createLogger } from '../../src/core/log.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import { insertDatasetRows } from '../support/datasets.js';
import { freePort, pgliteDump } from '../support/test-server.js';

let counter = 0;

/** A fresh dataset id, distinct across files and runs (tests share one Redis). */
export function newDatasetId(): string {
  counter++;
  return `nd${String((process.pid * 97 + counter * 7919 + Date.now()) % 1_000_000).padStart(6, '0')}`;
}

export async function insertDataset(db: Kysely<Database>, id: string, visibility: Visibility = 'public'): Promise<void> {
  counter++;
  const owner = await createUser(db, { username: `gw-owner-${process.pid}-${counter}`, email: `gw-${process.pid}-${counter}@example.org`, status: 'approved', role: 'member', kind: 'person' }, new Date());
  await insertDatasetRows(db, { id, name: `Gateway test ${id}`, owner_id: owner.id, visibility, zarr_status: 'ready', zarr_store_count: 1 });
}

export const STORE = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';

/** A tiny Zarr copy: index.json, a store's zarr.json, and one 1000-byte chunk whose byte i is i % 251. */
export async function putZarrCopy(objects: ObjectStore, id: string): Promise<{ chunk: Buffer; zarrJson: string; index: string }> {
  const chunk = Buffer.alloc(1000);
  for (let i = 0; i < chunk.length; i++) chunk[i] = i % 251;
  const zarrJson = JSON.stringify({ zarr_format: 3, node_type: 'group', attributes: { format: 'nds-zarr', dataset: id } });
  const index = JSON.stringify({ format: 'nds-zarr-index', format_version: 1, dataset_id: id, stores: [{ path: 'sub-01/eeg/sub-01_task-rest_eeg.eeg', zarr: STORE }] });
  await objects.put(`${id}/zarr/index.json`, index);
  await objects.put(`${id}/zarr/${STORE}/zarr.json`, zarrJson);
  await objects.put(`${id}/zarr/${STORE}/eeg_250hz/0/c/0/0`, chunk);
  return { chunk, zarrJson, index };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request with the target sent byte for byte (fetch would normalise `..` and `%2e%2e`). */
export function rawRequest(baseUrl: string, target: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawAnswer> {
  const base = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, method: options.method ?? 'GET', path: target, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

export interface StandaloneGateway extends RunningGateway {
  dataDir: string;
}

/** `nds gateway` in this process, on a free port, with its own folder store and the given database. */
export async function startStandaloneGateway(env: Record<string, string>): Promise<StandaloneGateway> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'nds-gw-'));
  const port = await freePort();
  const config = loadConfig({ PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: 'pglite:memory', LOG_LEVEL: process.env.NDS_TEST_LOG_LEVEL ?? 'silent', ...env });
  // `nds gateway` runs no migrations: an embedded database starts from the migrated template, as after `nds migrate`.
  const dump = config.databaseUrl.startsWith('pglite:') ? await pgliteDump() : undefined;
  const gateway = await startGatewayServer({ config, hostname: '127.0.0.1', log: createLogger(config.logLevel), pgliteDump: dump });
  return {
    ...gateway,
    dataDir,
    async close() {
      await gateway.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` with a Redis connection to `url`, closed afterwards. */
export async function withRedis<T>(url: string, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(url);
  try {
    return await fn(r);
  } finally {
    await r.quit();
  }
}

/** Pub/sub is asynchronous: the other instance hears the purge a moment later. */
export async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail('condition not met within 1 s');
}
