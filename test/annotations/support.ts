/** A dataset of uploaded versions (no repository), converted by the server's worker: what the annotation tests mark. */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import assert from 'node:assert/strict';
import { fixtures, gitRun, pushRemote } from '../conversion/support.js';
import type { TestAccount } from '../support/accounts.js';
import type { TestServer } from '../support/test-server.js';
import { json } from '../datasets/support.js';

const post = (body: unknown) => ({ method: 'POST', body: JSON.stringify(body) });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Uploads a fixture BIDS tree as version 1.0.0 of a new private dataset of `owner`, converts it; its id and first recording's data file. */
export async function uploadedDataset(
  server: TestServer,
  owner: TestAccount,
  tree = 'bids/emg_CustomBipolar',
  /** Files added to the tree's (an inherited sidecar, say). */
  extra: { path: string; bytes: Buffer }[] = [],
): Promise<{ id: string; recording: string; duration: number; channels: string[] }> {
  const created = await json(await owner.api('/datasets', post({ name: 'Annotated EMG', description: 'marks' })), 201);
  const id = created.id as string;
  const root = path.join(fixtures, tree);
  const files: { path: string; bytes: Buffer }[] = [];
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    files.push({ path: path.relative(root, full).split(path.sep).join('/'), bytes: await readFile(full) });
  }
  files.push(...extra);
  const manifest = files.map((f) => ({ path: f.path, size: f.bytes.length, sha256: sha(f.bytes) }));
  const { files: targets } = await json(await owner.api(`/datasets/${id}/upload-urls`, post({ files: manifest })), 200);
  for (const [i, target] of (targets as { status: string; url: string; headers: Record<string, string> }[]).entries()) {
    if (target.status !== 'upload') continue;
    const body = new Uint8Array(files[i]!.bytes);
    const res = await fetch(target.url, { method: 'PUT', headers: { ...target.headers, 'content-length': String(body.length) }, body });
    if (!res.ok) throw new Error(`upload of ${files[i]!.path}: ${res.status}`);
  }
  await json(await owner.api(`/datasets/${id}/versions`, post({ version: '1.0.0', manifest })), 201);
  await server.worker!.idle();
  const { recordings } = await json(await owner.api(`/datasets/${id}/recordings`), 200);
  const first = recordings[0] as { path: string; groups: Array<{ duration_s: number; channels: Array<{ label: string }> }> };
  return { id, recording: first.path, duration: Math.max(...first.groups.map((g) => g.duration_s)), channels: first.groups.flatMap((g) => g.channels.map((c) => c.label)) };
}

/**
 * Pushes `repo`'s main to dataset `id`'s hosted repository with `key`, and waits for the conversion the push
 * queues (the push is handled once git has exited) and for the server's worker.
 */
export async function pushAndConvert(server: TestServer, repo: string, id: string, key: string): Promise<void> {
  const pushed = await gitRun(repo, 'push', '-q', pushRemote(server.url, id, key), 'main');
  assert.equal(pushed.status, 0, pushed.stderr);
  const queued = async () => Number((await server.deps.db.selectFrom('conversion_jobs').select((eb) => eb.fn.countAll().as('n')).where('dataset_id', '=', id).executeTakeFirstOrThrow()).n);
  for (let waited = 0; (await queued()) === 0; waited += 50) {
    assert.ok(waited < 20_000, 'the push queued no conversion');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await server.worker!.idle();
}
