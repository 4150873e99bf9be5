/**
 * A worker's mirror of a dataset's source repository is bounded (MAX_SOURCE_MIRROR_BYTES): git bounds no
 * fetch, and a `source_repo` on an allowed host may be any size, so a fetch past the bound is stopped, the
 * mirror removed, and the conversion fails saying why. Shown through a hosted repository, which workers mirror
 * over HTTP the same way (no allowed external host can be reached from the tests).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sourceMirrorDir } from '../../src/conversion/zarr-ready.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader } from '../datasets/support.js';
import { gitIn, gitRun, makeBidsRepo, pushRemote } from './support.js';

const BOUND = 3_000_000;

describe('the bound of a source mirror', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { MAX_SOURCE_MIRROR_BYTES: String(BOUND) } });
  });
  after(() => server.close());

  it('converts a repository within it, and stops a fetch past it, keeping nothing of it', async () => {
    const owner = await createUploader(server);
    const id = 'nd000871';
    await insertDatasetRows(server.deps.db, { id, name: 'mirrored', owner_id: owner.user.id, visibility: 'private' });
    const remote = pushRemote(server.url, id, owner.key);
    const repo = makeBidsRepo();
    const conversion = async (count: number) => {
      for (let waited = 0; (await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).execute()).length < count; waited += 50) {
        assert.ok(waited < 20_000, 'the push queued a conversion');
        await new Promise((r) => setTimeout(r, 50));
      }
      await server.worker!.idle();
      return (await (await owner.api(`/datasets/${id}`)).json()) as { zarr_status: string; zarr_error: string | null };
    };
    try {
      assert.equal((await gitRun(repo, 'push', '-q', remote, 'HEAD:main')).status, 0);
      const first = await conversion(1);
      assert.equal(first.zarr_status, 'ready', first.zarr_error ?? '');
      assert.ok(existsSync(sourceMirrorDir(server.deps.config.dataDir, id)), 'the mirror is kept for the next conversion');

      // 5 MB that do not compress, beside a changed recording: the next fetch passes the bound.
      mkdirSync(path.join(repo, 'sourcedata'), { recursive: true });
      writeFileSync(path.join(repo, 'sourcedata', 'noise.bin'), randomBytes(5_000_000));
      writeFileSync(path.join(repo, 'sub-02/eeg/sub-02_task-rest_events.tsv'), 'onset\tduration\ttrial_type\n2.5\t0\tblink\n');
      gitIn(repo, 'add', '-A');
      gitIn(repo, 'commit', '-q', '-m', 'noise');
      assert.equal((await gitRun(repo, 'push', '-q', remote, 'HEAD:main')).status, 0);
      const second = await conversion(2);
      assert.equal(second.zarr_status, 'failed');
      assert.match(second.zarr_error ?? '', /The source repository is larger than this service mirrors \(2\.9 MiB, MAX_SOURCE_MIRROR_BYTES\)/);
      assert.equal(existsSync(sourceMirrorDir(server.deps.config.dataDir, id)), false, 'nothing of the mirror is kept');
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
