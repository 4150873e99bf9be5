/**
 * The path a dataset without a git repository takes to the browser: upload its files, create a version,
 * and the version is converted into the Zarr copy that the gateway serves.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixtures } from '../conversion/support.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from './support.js';
import type { TestAccount } from '../support/accounts.js';

const bids = path.join(fixtures, 'bids/emg_CustomBipolar');

async function filesOf(root: string): Promise<{ path: string; bytes: Buffer }[]> {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.push({ path: path.relative(root, full).split(path.sep).join('/'), bytes: await readFile(full) });
  }
  return out;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const post = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body) });

describe('a new version of a dataset without a repository', () => {
  let server: TestServer;
  let admin: TestAccount;
  before(async () => {
    server = await startTestServer();
    admin = await createUploader(server, { role: 'admin' });
  });
  after(() => server.close());

  it('is converted into a Zarr copy that the gateway serves', async () => {
    const created = await json(await admin.api('/datasets', post({ name: 'Custom bipolar EMG', description: 'Mirror of a public EMG dataset', visibility: 'public' })), 201);
    const id = created.id as string;
    const files = await filesOf(bids);
    const manifest = files.map((f) => ({ path: f.path, size: f.bytes.length, sha256: sha(f.bytes) }));
    const { files: targets } = await json(await admin.api(`/datasets/${id}/upload-urls`, post({ files: manifest })), 200);
    for (const [i, target] of (targets as { status: string; url: string; headers: Record<string, string> }[]).entries()) {
      if (target.status !== 'upload') continue;
      const body = new Uint8Array(files[i]!.bytes);
      const res = await fetch(target.url, { method: 'PUT', headers: { ...target.headers, 'content-length': String(body.length) }, body });
      assert.ok(res.ok, `upload of ${files[i]!.path}: ${res.status}`);
    }
    await json(await admin.api(`/datasets/${id}/versions`, post({ version: '1.0.0', manifest })), 201);

    await server.worker!.idle();
    const dataset = await json(await admin.api(`/datasets/${id}`), 200);
    assert.equal(dataset.zarr_status, 'ready');
    assert.equal(dataset.zarr_store_count, 1);

    const index = await json(await fetch(`${server.url}/zarrproxy/${id}/zarr/index.json`, { headers: { origin: server.url } }), 200);
    assert.deepEqual(index.stores.map((s: { zarr: string }) => s.zarr), ['sub-01/emg/sub-01_task-holdWeight_emg.zarr']);
    assert.equal(index.failure_count, 0);
    const root = await fetch(`${server.url}/zarrproxy/${id}/zarr/sub-01/emg/sub-01_task-holdWeight_emg.zarr/zarr.json`);
    assert.equal(root.status, 200);
    assert.equal(((await root.json()) as { attributes: { format: string } }).attributes.format, 'nds-zarr');
  });
});
