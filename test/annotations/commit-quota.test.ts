/**
 * An annotation commit writes content (the recordings' `_events.tsv`, `CHANGES`) like an upload, and its version
 * of a hosted repository copies from git what the store lacks: all of it counts against the owner's storage
 * quota, and a commit that would pass the quota is refused before anything is written or `main` moves, the
 * annotations kept for a later commit.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, gitRun, makeBidsRepo, pushRemote } from '../conversion/support.js';
import { createUploader, json } from '../datasets/support.js';
import { uploadedDataset } from './support.js';

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

/** What the dataset holds in the store: content, and the versions' manifests. */
async function storedContent(server: TestServer, id: string, prefixes = ['objects/', 'versions/']): Promise<number> {
  let stored = 0;
  for (const prefix of prefixes) for await (const o of server.deps.objects.list(`${id}/${prefix}`)) stored += o.size;
  return stored;
}

describe('annotation commits and the storage quota', () => {
  let server: TestServer;
  const QUOTA = 3_000_000;
  before(async () => {
    server = await startTestServer({ env: { STORAGE_QUOTA_BYTES: String(QUOTA) } });
  });
  after(() => server.close());

  it('counts the files a commit of an uploaded dataset writes, and refuses the commit that would pass the quota', async () => {
    const owner = await createUploader(server);
    // The recording's own events file: 700 kB of rows, which each commit writes again with its marks.
    const rows = ['onset\tduration\ttrial_type', ...Array.from({ length: 35_000 }, (_, i) => `${i}\t0\tmark-${String(i).padStart(8, '0')}`)].join('\n') + '\n';
    const eventsPath = 'sub-01/emg/sub-01_task-holdWeight_events.tsv';
    const { id, recording } = await uploadedDataset(server, owner, 'bids/emg_CustomBipolar', [{ path: eventsPath, bytes: Buffer.from(rows) }]);
    const commits: number[] = [];
    for (let i = 0; i < 4; i++) {
      await json(await owner.api(`/datasets/${id}/annotations`, post({ path: recording, onset: 0.1 + i / 100, duration: 0.1, label: `mark ${i}` })), 201);
      const res = await owner.api(`/datasets/${id}/annotations/commit`, post({ message: `commit ${i}` }));
      commits.push(res.status);
      const use = await json(await owner.api('/users/me/storage'), 200);
      assert.equal(use.used_bytes, await storedContent(server, id), `after commit ${i} (${res.status}), the ledger counts what the store holds`);
      assert.ok(use.used_bytes <= QUOTA);
      if (res.status === 403) {
        assert.equal((await res.json()).error, 'storage_quota_exceeded');
        break;
      }
    }
    assert.ok(commits.includes(201) && commits.at(-1) === 403, `commits answered ${commits.join(', ')}: some taken, then one refused`);
    // The refused commit lost nothing: its marks wait for the next commit.
    const pending = await json(await owner.api(`/datasets/${id}/annotations?path=${encodeURIComponent(recording)}`), 200);
    assert.ok(JSON.stringify(pending).includes(`mark ${commits.length - 1}`));
  });

  it("refuses a hosted repository's commit whose version would copy past the quota, before main moves", async () => {
    const owner = await createUploader(server);
    const id = 'nd000777';
    await insertDatasetRows(server.deps.db, { id, name: 'hosted', owner_id: owner.user.id, visibility: 'private' });
    const remote = pushRemote(server.url, id, owner.key);
    const repo = makeBidsRepo();
    try {
      // 12 MB of zeros in git itself: a few kB in the pack, within MAX_GIT_FILE_BYTES.
      mkdirSync(path.join(repo, 'sourcedata'), { recursive: true });
      for (let i = 0; i < 3; i++) writeFileSync(path.join(repo, 'sourcedata', `zeros-${i}.bin`), Buffer.alloc(4_000_000, i));
      gitIn(repo, 'add', '-A');
      gitIn(repo, 'commit', '-q', '-m', 'zeros');
      const pushed = await gitRun(repo, 'push', '-q', remote, 'main');
      assert.equal(pushed.status, 0, pushed.stderr);
      for (let waited = 0; (await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).execute()).length === 0; waited += 100) {
        assert.ok(waited < 20_000, 'the push queued no conversion');
        await new Promise((r) => setTimeout(r, 100));
      }
      await server.worker!.idle();
      const head = gitIn(repositoryDir(server.deps.config.gitDir, id), 'rev-parse', 'refs/heads/main');
      const { recordings } = await json(await owner.api(`/datasets/${id}/recordings`), 200);
      await json(await owner.api(`/datasets/${id}/annotations`, post({ path: recordings[0].path, onset: 0.1, duration: 0.1, label: 'x' })), 201);
      const commit = await owner.api(`/datasets/${id}/annotations/commit`, post({ message: 'one mark' }));
      assert.equal(commit.status, 403);
      assert.equal((await commit.json()).error, 'storage_quota_exceeded');
      assert.equal(gitIn(repositoryDir(server.deps.config.gitDir, id), 'rev-parse', 'refs/heads/main'), head, 'main did not move');
      assert.equal(await storedContent(server, id, ['objects/']), 0, 'nothing was copied into the store');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
