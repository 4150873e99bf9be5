/**
 * Committing annotations at the node that does not hold the dataset's hosted repository (decisions 0026 and
 * 0028): the request is forwarded to the holder, which makes the commit on `main`, the version and the
 * conversion. Two real nds servers in this process on one PostgreSQL database and one object store, each with a
 * disk of its own (its repositories folder), as two API nodes of a cluster; the conversion is done by the worker
 * of the node without the repository. Asserted is what the user is promised: the version exists, the
 * recordings' `_events.tsv` in the repository carry the marks (read on the holder's disk and in a clone through
 * the other node), and the conversion makes them appear in `GET /datasets/:id/events` at both nodes; and when
 * the holder cannot be reached, the commit is the caller's 503 with the reason and nothing is made.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { repositoryDir } from '../../src/git/repository-dir.js';
import { apiFetch, createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { freePort, startTestServer, usingPostgres, type TestServer } from '../support/test-server.js';
import { json } from '../datasets/support.js';
import { gitIn, gitRun, makeBidsRepo } from '../conversion/support.js';

const ID = 'nd000412';
const EMG = 'sub-01/emg/sub-01_task-holdWeight_emg.edf';
const EEG = 'sub-02/eeg/sub-02_task-rest_eeg.edf';
const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

describe(
  'annotations committed at the node without the hosted repository, forwarded to its holder',
  { skip: usingPostgres ? false : 'two nodes share a PostgreSQL database only (the suite runs this in its PostgreSQL pass)', timeout: 180_000 },
  () => {
    let holder: TestServer;
    let other: TestServer;
    let owner: TestAccount;
    let stranger: TestAccount;
    let repo: string;
    const work = mkdtempSync(path.join(os.tmpdir(), 'nds-forwarded-commit-'));
    /** A request to the node without the repository, as `account`. */
    const atOther = (account: TestAccount, p: string, init?: RequestInit) => apiFetch(other, p, account.key, init);
    const remote = (server: TestServer) => {
      const u = new URL(`${server.url}/git/${ID}.git`);
      [u.username, u.password] = ['nds', owner.key];
      return u.toString();
    };
    const holderGit = (...args: string[]) => gitIn(work, '--git-dir', repositoryDir(holder.config.gitDir, ID), ...args);
    const dataset = () => holder.deps.db.selectFrom('datasets').select(['zarr_source_commit', 'zarr_status']).where('id', '=', ID).executeTakeFirstOrThrow();
    /** Waits until the conversion of `commit` is done (the worker is the other node's). */
    const converted = async (commit: string) => {
      for (let waited = 0; ; waited += 100) {
        await other.worker!.idle();
        const d = await dataset();
        if (d.zarr_source_commit === commit && d.zarr_status === 'ready') return;
        assert.ok(waited < 60_000, `the conversion of ${commit} did not finish: ${JSON.stringify(d)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };

    before(async () => {
      // One object store and one signing secret for the two nodes; disks (DATA_DIR, the repositories) of their own.
      const shared = { OBJECT_STORE_URL: `file:${path.join(work, 'objects')}`, OBJECT_SIGNING_SECRET: randomBytes(16).toString('hex') };
      holder = await startTestServer({ env: { ...shared, IN_PROCESS_WORKER: 'false' } });
      other = await startTestServer({ env: { ...shared, DATABASE_URL: holder.config.databaseUrl } });
      assert.notEqual(holder.config.nodeUrl, other.config.nodeUrl);
      owner = await createAccount(holder);
      stranger = await createAccount(holder);
      await insertDatasetRows(holder.deps.db, { id: ID, name: 'Annotated on two nodes', owner_id: owner.user.id, visibility: 'private' });
      repo = makeBidsRepo();
      // The first push goes to the holder itself: it creates the repository there and records the holder.
      const pushed = await gitRun(repo, 'push', '-q', remote(holder), 'main');
      assert.equal(pushed.status, 0, pushed.stderr);
      await converted(gitIn(repo, 'rev-parse', 'HEAD'));
    });
    after(async () => {
      await Promise.all([holder?.close(), other?.close()]);
      rmSync(work, { recursive: true, force: true });
      if (repo) rmSync(repo, { recursive: true, force: true });
    });

    it('makes the commit on the holder, a version of it, and a conversion whose events carry the marks', async () => {
      const pushedHead = gitIn(repo, 'rev-parse', 'HEAD');
      await json(await atOther(owner, `/datasets/${ID}/annotations`, post({ path: EEG, onset: 0.5, duration: 0.25, label: 'spike' })), 201);
      await json(await atOther(owner, `/datasets/${ID}/annotations`, post({ path: EMG, onset: 0.1, duration: 0.2, channels: null, label: 'tremor' })), 201);

      // A stranger is answered by the node asked, as for an unknown dataset: nothing is forwarded for them.
      const refused = await atOther(stranger, `/datasets/${ID}/annotations/commit`, post({ message: 'x' }));
      const unknown = await atOther(stranger, '/datasets/nd999999/annotations/commit', post({ message: 'x' }));
      assert.deepEqual([refused.status, JSON.stringify(await refused.json()).replaceAll(ID, '?')], [unknown.status, JSON.stringify(await unknown.json()).replaceAll('nd999999', '?')]);

      const committed = await json(await atOther(owner, `/datasets/${ID}/annotations/commit`, post({ message: 'Marked on the other node' })), 201);
      assert.equal(committed.version, '1.0.0');
      assert.deepEqual(committed.files, ['CHANGES', 'sub-01/emg/sub-01_task-holdWeight_events.tsv', 'sub-02/eeg/sub-02_task-rest_events.tsv']);
      assert.equal(committed.annotations, 2);

      // The commit is on main of the holder's repository, on top of the push; the other node holds no copy.
      assert.equal(holderGit('rev-parse', 'refs/heads/main'), committed.commit);
      assert.equal(holderGit('rev-parse', `${committed.commit}^`), pushedHead);
      assert.equal(holderGit('rev-parse', 'v1.0.0^{commit}'), committed.commit);
      assert.equal(existsSync(repositoryDir(other.config.gitDir, ID)), false, 'the node without the repository made one');
      assert.match(holderGit('show', `${committed.commit}:sub-02/eeg/sub-02_task-rest_events.tsv`), /^0\.5\t0\.25\tspike\t/m);

      // A clone through the node without the repository (forwarded too) has the same commit and files.
      const cloned = await gitRun(work, 'clone', '-q', remote(other), 'clone');
      assert.equal(cloned.status, 0, cloned.stderr);
      const clone = path.join(work, 'clone');
      assert.equal(gitIn(clone, 'rev-parse', 'HEAD'), committed.commit);
      const eegEvents = readFileSync(path.join(clone, 'sub-02/eeg/sub-02_task-rest_events.tsv'), 'utf8');
      assert.match(eegEvents, /^1\.5\t0\tblink/m, 'the row the events file had is kept');
      assert.match(eegEvents, /^0\.5\t0\.25\tspike\t/m);
      assert.match(readFileSync(path.join(clone, 'sub-01/emg/sub-01_task-holdWeight_events.tsv'), 'utf8'), /^0\.1\t0\.2\ttremor\t/m);
      assert.match(readFileSync(path.join(clone, 'CHANGES'), 'utf8'), /^1\.0\.0 \d{4}-\d\d-\d\d\n {2}- Marked on the other node/);
      assert.deepEqual(gitIn(clone, 'diff', '--name-only', 'HEAD^', 'HEAD').split('\n').sort(), committed.files);

      // The version is listed at both nodes, of that commit.
      for (const node of [other, holder]) {
        const { versions } = await json(await apiFetch(node, `/datasets/${ID}/versions`, owner.key), 200);
        assert.deepEqual(versions.map((v: { version: string }) => v.version), ['1.0.0']);
      }

      await converted(committed.commit);
      for (const node of [other, holder]) {
        const eeg = await json(await apiFetch(node, `/datasets/${ID}/events?path=${encodeURIComponent(EEG)}`, owner.key), 200);
        assert.deepEqual(eeg.events.map((e: { onset: number; trial_type: string }) => [e.onset, e.trial_type]), [[0.5, 'spike'], [1.5, 'blink']]);
        const emg = await json(await apiFetch(node, `/datasets/${ID}/events?path=${encodeURIComponent(EMG)}`, owner.key), 200);
        assert.deepEqual(emg.events.map((e: { onset: number; duration: number; trial_type: string }) => [e.onset, e.duration, e.trial_type]), [[0.1, 0.2, 'tremor']]);
      }
    });

    it('a second commit, asked for at the other node, follows the first: version 1.0.1 on top of it', async () => {
      const first = holderGit('rev-parse', 'refs/heads/main');
      await json(await atOther(owner, `/datasets/${ID}/annotations`, post({ path: EMG, onset: 0.4, duration: 0.1, label: 'tremor' })), 201);
      const committed = await json(await atOther(owner, `/datasets/${ID}/annotations/commit`, post({ message: 'One more' })), 201);
      assert.equal(committed.version, '1.0.1');
      assert.equal(holderGit('rev-parse', `${committed.commit}^`), first);
      assert.equal(holderGit('rev-parse', 'refs/heads/main'), committed.commit);
      // Nothing new since: refused, as at the holder.
      const again = await atOther(owner, `/datasets/${ID}/annotations/commit`, post({ message: 'Nothing new' }));
      assert.equal(again.status, 409);
      assert.equal((await again.json()).error, 'version_unchanged');
      await converted(committed.commit);
      const emg = await json(await atOther(owner, `/datasets/${ID}/events?path=${encodeURIComponent(EMG)}`), 200);
      assert.deepEqual(emg.events.map((e: { onset: number; trial_type: string }) => [e.onset, e.trial_type]), [[0.1, 'tremor'], [0.4, 'tremor']]);
    });

    it('with the holder out of reach, answers 503 with the reason and a time to come back, and makes nothing', async () => {
      const head = holderGit('rev-parse', 'refs/heads/main');
      await json(await atOther(owner, `/datasets/${ID}/annotations`, post({ path: EEG, onset: 2, duration: 0.5, label: 'spike' })), 201);
      // The holder's address now answers nothing (a node gone): nobody listens on that port.
      const gone = `http://127.0.0.1:${await freePort()}`;
      await holder.deps.db.updateTable('repository_holders').set({ node_url: gone }).where('dataset_id', '=', ID).execute();
      try {
        const refused = await atOther(owner, `/datasets/${ID}/annotations/commit`, post({ message: 'While the holder is away' }));
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get('retry-after'), '30');
        assert.equal((await refused.json()).error, 'repository_unavailable');
      } finally {
        await holder.deps.db.updateTable('repository_holders').set({ node_url: holder.config.nodeUrl }).where('dataset_id', '=', ID).execute();
      }
      assert.equal(holderGit('rev-parse', 'refs/heads/main'), head);
      const { versions } = await json(await atOther(owner, `/datasets/${ID}/versions`), 200);
      assert.deepEqual(versions.map((v: { version: string }) => v.version).sort(), ['1.0.0', '1.0.1']);
      // Back: the same request is made.
      const committed = await json(await atOther(owner, `/datasets/${ID}/annotations/commit`, post({ message: 'The holder is back' })), 201);
      assert.equal(committed.version, '1.0.2');
      assert.equal(holderGit('rev-parse', `${committed.commit}^`), head);
      await converted(committed.commit);
    });
  },
);
