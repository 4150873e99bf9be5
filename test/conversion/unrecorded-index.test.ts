/**
 * A conversion whose `index.json` was written but never recorded in the database (its worker lost the store's
 * answer, or died, right after the write): the copy is then of a commit the dataset's `zarr_source_commit`
 * does not name. The next conversion is planned over that index, and the recording catalogue must follow the
 * stores that index named, not only those the next conversion converted: it catalogues what was converted over
 * the copy its plan read, not over the dataset's recorded commit. Before, the rows of the recordings the lost
 * conversion changed kept their older metadata until a full re-read.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enqueueConversion, pruneFinishedJobs } from '../../src/conversion/job-queue.js';
import { startWorker } from '../../src/conversion/worker.js';
import type { Deps } from '../../src/deps.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import { createAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { until } from './gated-store.js';
import { gitIn, hostedSource, hostRepository, makeEdfRepo, sineEdf } from './support.js';

const id = 'nd000938';
const SUB01 = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';
const DAY = 86_400_000;

/** The store, but the first write of `key` lands and then fails, as if its answer was lost. */
function losingTheAnswerOf(objects: ObjectStore, key: string): ObjectStore {
  let lost = false;
  return new Proxy(objects, {
    get(target, prop) {
      if (prop === 'put') {
        return async (k: string, ...rest: unknown[]) => {
          const written = await (target.put as (...a: unknown[]) => Promise<unknown>).call(target, k, ...rest);
          if (k === key && !lost) {
            lost = true;
            throw new Error('connection reset');
          }
          return written;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe('an index written and never recorded', { timeout: 240_000 }, () => {
  let server: TestServer;
  let repo: string;

  before(async () => {
    server = await startTestServer({ env: { IN_PROCESS_WORKER: 'false' } });
    const owner = await createAccount(server, { role: 'admin' });
    repo = hostRepository(server.config.gitDir, id, makeEdfRepo(server.dataDir, 'unrecorded-src', { subjects: 2, seconds: 10, channels: 2, rate: 100 }));
    await insertDatasetRows(server.deps.db, { id, name: 'Unrecorded index', owner_id: owner.user.id, visibility: 'public', source_repo: hostedSource });
  });
  after(() => server.close());

  /** Converts the repository's head with `deps` (a worker of its own) until its job ends in `state`. */
  async function convert(deps: Deps, state: 'done' | 'failed'): Promise<void> {
    const { job } = await enqueueConversion(server.deps.db, { datasetId: id, ref: 'main', full: false, reason: 'test' });
    const worker = startWorker(deps, { pollMs: 10 });
    try {
      await until(`job ${state}`, async () => (await server.deps.db.selectFrom('conversion_jobs').select('state').where('id', '=', job.id).executeTakeFirstOrThrow()).state === state);
    } finally {
      await worker.stop();
    }
  }
  const head = () => gitIn(repo, 'rev-parse', 'HEAD');
  const sub01Row = () => server.deps.db.selectFrom('recordings').select('n_channels').where('dataset_id', '=', id).where('zarr', '=', SUB01).executeTakeFirstOrThrow();
  const sub01Indexed = async () => {
    const index = JSON.parse((await server.deps.objects.readAll(`${id}/zarr/index.json`))!.toString()) as { source_commit: string; stores: Array<{ zarr: string; groups: Array<{ n_channels: number }> }> };
    return { commit: index.source_commit, channels: index.stores.find((s) => s.zarr === SUB01)!.groups.reduce((n, g) => n + g.n_channels, 0) };
  };

  it('is followed by the catalogue at the next conversion, which converts another recording', async () => {
    await convert(server.deps, 'done');
    const commitA = head();
    assert.equal((await sub01Row()).n_channels, 2);

    // Commit B gives sub-01 a third channel; its conversion writes index B, but the write's answer is lost.
    writeFileSync(path.join(repo, 'sub-01/eeg/sub-01_task-rest_eeg.edf'), sineEdf(3, 5));
    gitIn(repo, 'commit', '-q', '-am', 'sub-01: 3 channels');
    const commitB = head();
    await convert({ ...server.deps, objects: losingTheAnswerOf(server.deps.objects, `${id}/zarr/index.json`) }, 'failed');
    assert.deepEqual(await sub01Indexed(), { commit: commitB, channels: 3 }, 'index B is the copy');
    const recorded = await server.deps.db.selectFrom('datasets').select('zarr_source_commit').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(recorded.zarr_source_commit, commitA, 'the database never recorded B');
    // A month passes: the failed job's history is pruned (CONVERSION_JOBS_KEEP_DAYS), and with it the tasks that
    // would have had sub-01 converted again as a store of a job that never published.
    await pruneFinishedJobs(server.deps.db, new Date(server.clock.now().getTime() + 31 * DAY), server.config.conversionJobsKeepDays);

    // Commit C changes sub-02 only: planned over index B, it converts sub-02 and keeps B's sub-01.
    writeFileSync(path.join(repo, 'sub-02/eeg/sub-02_task-rest_eeg.edf'), sineEdf(2, 9));
    gitIn(repo, 'commit', '-q', '-am', 'sub-02 changed');
    await convert(server.deps, 'done');
    assert.deepEqual(await sub01Indexed(), { commit: head(), channels: 3 });
    assert.equal((await sub01Row()).n_channels, 3, 'the catalogue row is of the store the index names');
  });
});
