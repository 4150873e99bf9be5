/**
 * A catalogue sync that fails (a store's metadata could not be read at that moment: an object store error)
 * leaves the conversion `ready` and the rows of the stores it converted as they were. The catalogue is then
 * not whole at the copy: the next conversion reads every store again, not only those it converted, and so
 * does the startup backfill; until then the stale rows keep their own commit, never the newer copy's.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion } from '../../src/conversion/job-queue.js';
import { startWorker } from '../../src/conversion/worker.js';
import { backfillCatalogue } from '../../src/recordings/catalogue-sync.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import type { Deps } from '../../src/deps.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, hostedSource, hostRepository, makeEdfRepo, sineEdf } from '../conversion/support.js';

const id = 'nd000936';
const SUB01 = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';

/** The store, but reading `key` fails (a transient error of the object store). */
function failingReadsOf(objects: ObjectStore, key: string): ObjectStore {
  return new Proxy(objects, {
    get(target, prop) {
      if (prop === 'get' || prop === 'readAll') {
        return async (k: string, ...rest: unknown[]) => {
          if (k === key) throw new Error('simulated object store error (503)');
          return (Reflect.get(target, prop, target) as (...a: unknown[]) => unknown).call(target, k, ...rest);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('a publication whose catalogue sync failed', { timeout: 240_000 }, () => {
  let server: TestServer;
  let repo: string;

  before(async () => {
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    const owner = await createAccount(server, { role: 'admin' });
    repo = hostRepository(server.config.gitDir, id, makeEdfRepo(server.dataDir, 'mend-src', { subjects: 2, seconds: 10, channels: 2, rate: 100 }));
    await insertDatasetRows(server.deps.db, { id, name: 'Catalogue mending', owner_id: owner.user.id, visibility: 'public', source_repo: hostedSource });
  });
  after(() => server.close());

  /** Converts the repository's new commit with `deps` (a worker of its own), to the end. */
  async function convert(deps: Deps): Promise<void> {
    const { job } = await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    const worker = startWorker(deps, { pollMs: 10 });
    try {
      await until('job done', async () => (await server.deps.db.selectFrom('conversion_jobs').select('state').where('id', '=', job.id).executeTakeFirstOrThrow()).state === 'done');
    } finally {
      await worker.stop();
    }
  }
  /** Commits sub-01 with `channels` channels, and converts it while reading its store's metadata fails. */
  async function convertSub01FailingSync(channels: number, seed: number): Promise<string> {
    writeFileSync(path.join(repo, 'sub-01/eeg/sub-01_task-rest_eeg.edf'), sineEdf(channels, seed));
    gitIn(repo, 'commit', '-q', '-am', `sub-01: ${channels} channels`);
    await convert({ ...server.deps, objects: failingReadsOf(server.deps.objects, `${id}/zarr/${SUB01}/zarr.json`) });
    return gitIn(repo, 'rev-parse', 'HEAD');
  }
  const sub01 = () => server.deps.db.selectFrom('recordings').select(['n_channels', 'source_commit']).where('dataset_id', '=', id).where('zarr', '=', SUB01).executeTakeFirstOrThrow();
  const indexChannels = async () => {
    const index = JSON.parse((await server.deps.objects.readAll(`${id}/zarr/index.json`))!.toString()) as { stores: Array<{ zarr: string; groups: Array<{ n_channels: number }> }> };
    return index.stores.find((s) => s.zarr === SUB01)!.groups.reduce((n, g) => n + g.n_channels, 0);
  };

  it('is mended by the next conversion, although that one converts another recording', async () => {
    await convert(server.deps);
    const commitA = gitIn(repo, 'rev-parse', 'HEAD');
    assert.deepEqual(await sub01(), { n_channels: 2, source_commit: commitA });

    await convertSub01FailingSync(3, 5);
    assert.equal(await indexChannels(), 3, 'the published index names 3 channels');
    assert.deepEqual(await sub01(), { n_channels: 2, source_commit: commitA }, 'the sync failed: the row is of the first version, and says so');

    writeFileSync(path.join(repo, 'sub-02/eeg/sub-02_task-rest_eeg.edf'), sineEdf(2, 9));
    gitIn(repo, 'commit', '-q', '-am', 'sub-02 changed');
    const commitC = gitIn(repo, 'rev-parse', 'HEAD');
    await convert(server.deps);
    assert.deepEqual(await sub01(), { n_channels: 3, source_commit: commitC });
  });

  it('is mended by the startup backfill, which then leaves the whole catalogue alone', async () => {
    const commitD = await convertSub01FailingSync(4, 7);
    assert.equal(await indexChannels(), 4);
    assert.equal((await sub01()).n_channels, 3);

    assert.equal(await backfillCatalogue(server.deps), 1);
    assert.deepEqual(await sub01(), { n_channels: 4, source_commit: commitD });
    assert.equal(await backfillCatalogue(server.deps), 0, 'a catalogue whole at its copy is not read again at every start');
  });
});
