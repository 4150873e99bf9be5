/**
 * Committing annotations into a dataset whose source is its hosted git repository: the events files become a
 * commit on `main` by the user (never their address), a version of that commit, and the conversion a push
 * gets, so the marks reach `GET /datasets/:id/events`. Commits asked for at once never lose one another: they
 * are made one after the other, and one that would change nothing is refused with 409.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { pushAndConvert } from './support.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { json } from '../datasets/support.js';
import { gitIn, gitRun, makeBidsRepo } from '../conversion/support.js';
import { repositoryDir } from '../../src/git/repository-dir.js';

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

describe('annotations committed into a hosted git repository', () => {
  let server: TestServer;
  let owner: TestAccount;
  let stranger: TestAccount;
  let repo: string;
  let scratch: string;
  const id = 'nd000411';
  const emg = 'sub-01/emg/sub-01_task-holdWeight_emg.edf';
  const eeg = 'sub-02/eeg/sub-02_task-rest_eeg.edf';
  const remote = (key: string) => {
    const u = new URL(`${server.url}/git/${id}.git`);
    u.username = 'nds';
    u.password = key;
    return u.toString();
  };

  before(async () => {
    // Far above the fixtures' files; the last test puts one past it in the repository.
    server = await startTestServer({ env: { MAX_GIT_FILE_BYTES: String(4 << 20) } });
    owner = await createAccount(server);
    stranger = await createAccount(server);
    repo = makeBidsRepo();
    scratch = mkdtempSync(path.join(os.tmpdir(), 'nds-commit-clone-'));
    await insertDatasetRows(server.deps.db, { id, name: 'Hosted and annotated', owner_id: owner.user.id, visibility: 'private' });
    await pushAndConvert(server, repo, id, owner.key);
  });
  after(async () => {
    await server.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  it('commits the events files on main as the user, makes a version of it, and converts it', async () => {
    const pushedHead = gitIn(repo, 'rev-parse', 'HEAD');
    await json(await owner.api(`/datasets/${id}/annotations`, post({ path: eeg, onset: 0.5, duration: 0.25, label: 'spike' })), 201);
    await json(await owner.api(`/datasets/${id}/annotations`, post({ path: emg, onset: 0.1, duration: 0.2, label: 'tremor' })), 201);
    // A stranger is told what an unknown dataset would be, before any git work.
    const refused = await stranger.api(`/datasets/${id}/annotations/commit`, post({ message: 'x' }));
    const unknown = await stranger.api('/datasets/nd999999/annotations/commit', post({ message: 'x' }));
    assert.deepEqual([refused.status, JSON.stringify(await refused.json()).replaceAll(id, '?')], [unknown.status, JSON.stringify(await unknown.json()).replaceAll('nd999999', '?')]);

    const committed = await json(await owner.api(`/datasets/${id}/annotations/commit`, post({ message: 'Spikes and tremor' })), 201);
    assert.equal(committed.version, '1.0.0');
    assert.deepEqual(committed.files, ['CHANGES', 'sub-01/emg/sub-01_task-holdWeight_events.tsv', 'sub-02/eeg/sub-02_task-rest_events.tsv']);
    assert.match(committed.commit, /^[0-9a-f]{40}$/);

    const cloned = await gitRun(scratch, 'clone', '-q', remote(owner.key), 'clone');
    assert.equal(cloned.status, 0, cloned.stderr);
    const clone = path.join(scratch, 'clone');
    assert.equal(gitIn(clone, 'rev-parse', 'HEAD'), committed.commit);
    assert.equal(gitIn(clone, 'rev-parse', 'HEAD^'), pushedHead);
    assert.equal(gitIn(clone, 'log', '-1', '--format=%an <%ae>'), `${owner.user.username} <${owner.user.username}@users.noreply.${new URL(server.url).hostname}>`);
    assert.equal(gitIn(clone, 'rev-parse', 'v1.0.0^{commit}'), committed.commit);
    // The events file the recording had keeps its row; the one it lacked is made.
    const eegEvents = readFileSync(path.join(clone, 'sub-02/eeg/sub-02_task-rest_events.tsv'), 'utf8');
    assert.match(eegEvents, /^1\.5\t0\tblink/m);
    assert.match(eegEvents, /^0\.5\t0\.25\tspike\t/m);
    assert.match(readFileSync(path.join(clone, 'sub-01/emg/sub-01_task-holdWeight_events.tsv'), 'utf8'), /^0\.1\t0\.2\ttremor\t/m);
    assert.match(readFileSync(path.join(clone, 'CHANGES'), 'utf8'), /^1\.0\.0 \d{4}-\d\d-\d\d\n {2}- Spikes and tremor/);
    // Nothing else of the tree changed.
    assert.deepEqual(gitIn(clone, 'diff', '--name-only', 'HEAD^', 'HEAD').split('\n').sort(), committed.files);

    await server.worker!.idle();
    const d = await server.deps.db.selectFrom('datasets').select(['zarr_source_commit', 'zarr_status']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual([d.zarr_source_commit, d.zarr_status], [committed.commit, 'ready']);
    const events = await json(await owner.api(`/datasets/${id}/events?path=${encodeURIComponent(eeg)}`), 200);
    assert.deepEqual(
      events.events.map((e: { onset: number; trial_type: string }) => [e.onset, e.trial_type]),
      [[0.5, 'spike'], [1.5, 'blink']],
    );
  });

  it('of commits asked for at once, the first is made and the others, finding nothing new, are refused with 409', async () => {
    const before = gitIn(path.join(scratch, 'clone'), 'rev-parse', 'HEAD');
    await json(await owner.api(`/datasets/${id}/annotations`, post({ path: emg, onset: 0.4, duration: 0.1, label: 'tremor' })), 201);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => owner.api(`/datasets/${id}/annotations/commit`, post({ message: `race ${i}` }))));
    const statuses = answers.map((a) => a.status);
    assert.deepEqual([...statuses].sort(), [201, 409, 409, 409, 409, 409]);
    const made = await Promise.all(answers.filter((a) => a.status === 201).map((a) => a.json() as Promise<{ version: string; commit: string }>));
    assert.equal(made[0]!.version, '1.0.1');
    for (const refused of answers.filter((a) => a.status === 409)) assert.equal((await refused.json()).error, 'version_unchanged');
    const fetched = await gitRun(path.join(scratch, 'clone'), 'pull', '-q', '--ff-only', '--tags', 'origin', 'main');
    assert.equal(fetched.status, 0, fetched.stderr);
    const clone = path.join(scratch, 'clone');
    // Exactly the answered commits are new on main, one after another, each tagged with its version.
    const added = gitIn(clone, 'rev-list', '--reverse', `${before}..HEAD`).split('\n').filter(Boolean);
    assert.deepEqual([...added].sort(), made.map((m) => m.commit).sort());
    for (const m of made) assert.equal(gitIn(clone, 'rev-parse', `v${m.version}^{commit}`), m.commit);
    const versions = await json(await owner.api(`/datasets/${id}/versions`), 200);
    assert.deepEqual(versions.versions.map((v: { version: string }) => v.version).sort(), ['1.0.0', ...made.map((m) => m.version)].sort());
    await server.worker!.idle();
  });

  it('refuses a commit on a tree holding a file over MAX_GIT_FILE_BYTES in git itself, before main moves', async () => {
    const clone = path.join(scratch, 'clone');
    const fetched = await gitRun(clone, 'pull', '-q', '--ff-only', 'origin', 'main');
    assert.equal(fetched.status, 0, fetched.stderr);
    writeFileSync(path.join(clone, 'sourcedata.bin'), Buffer.alloc(24 << 20));
    gitIn(clone, 'add', 'sourcedata.bin');
    gitIn(clone, '-c', 'user.name=T', '-c', 'user.email=t@example.org', 'commit', '-qm', '24 MiB of zeros in git itself');
    // A push refuses such a file (decision 0054): written into the repository's folder, as one pushed to before may hold it.
    const pushed = await gitRun(clone, 'push', '-q', repositoryDir(server.config.gitDir, id), 'HEAD:main');
    assert.equal(pushed.status, 0, pushed.stderr);
    const head = gitIn(clone, 'rev-parse', 'HEAD');
    await server.worker!.idle();
    await json(await owner.api(`/datasets/${id}/annotations`, post({ path: emg, onset: 0.7, duration: 0.1, label: 'late' })), 201);
    const refused = await json(await owner.api(`/datasets/${id}/annotations/commit`, post({ message: 'after the big file' })), 400);
    assert.equal(refused.error, 'validation_failed');
    assert.deepEqual(refused.details, ['sourcedata.bin: 25,165,824 bytes in git, more than 4,194,304 (4 MiB)']);
    assert.equal((await gitRun(clone, 'fetch', '-q', 'origin')).status, 0);
    assert.equal(gitIn(clone, 'rev-parse', 'origin/main'), head, 'main did not move');
  });
});
