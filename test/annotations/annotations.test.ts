/**
 * Annotations over real HTTP (decision 0028): revisions per recording, If-Match conflicts, a race of many
 * edits from one revision with exactly one winner, who may change what, the kept history (and the bound of its
 * query), the byte-stable export, the commit into a new version whose conversion carries the labels into events
 * and windows, and the labels used across a dataset's recordings.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from '../datasets/support.js';
import { uploadedDataset } from './support.js';

const send = (method: string, body?: unknown, ifMatch?: string): RequestInit => ({ method, ...(body !== undefined && { body: JSON.stringify(body) }), ...(ifMatch !== undefined && { headers: { 'if-match': ifMatch } }) });

describe('annotations', () => {
  let server: TestServer;
  let owner: TestAccount;
  let annotator: TestAccount;
  let other: TestAccount;
  let reader: TestAccount;
  let maintainer: TestAccount;
  let id: string;
  let recording: string;
  let duration: number;
  let channels: string[];
  const q = () => `path=${encodeURIComponent(recording)}`;

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    [annotator, other, reader, maintainer] = await Promise.all([createAccount(server), createAccount(server), createAccount(server), createAccount(server)]);
    ({ id, recording, duration, channels } = await uploadedDataset(server, owner));
    for (const [who, role] of [[annotator, 'annotator'], [other, 'annotator'], [reader, 'reader'], [maintainer, 'maintainer']] as const) {
      await json(await owner.api(`/datasets/${id}/members/${who.user.username}`, send('PUT', { role })), 201);
    }
  });
  after(() => server.close());

  it('starts at revision 0, and each change moves the recording one revision on', async () => {
    const empty = await json(await reader.api(`/datasets/${id}/annotations?${q()}`), 200);
    assert.deepEqual(empty, { annotations: [], revision: 0 });
    const made = await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.15, duration: 0.2, label: 'artefact', channels: [channels[0]] }, '"0"')), 201);
    assert.equal(made.revision, 1);
    const a = made.annotations[0];
    assert.deepEqual([a.onset, a.duration, a.label, a.channels, a.author, a.hed, a.note], [0.15, 0.2, 'artefact', [channels[0]], annotator.user.username, null, null]);
    const res = await reader.api(`/datasets/${id}/annotations?${q()}`);
    assert.equal(res.headers.get('etag'), '"1"');
    const listed = await json(res, 200);
    assert.equal(listed.revision, 1);
    assert.deepEqual(listed.annotations.map((x: { id: string }) => x.id), [a.id]);
    const patched = await json(await annotator.api(`/datasets/${id}/annotations/${a.id}`, send('PATCH', { label: 'movement', note: 'arm' }, '"1"')), 200);
    assert.deepEqual([patched.revision, patched.annotation.label, patched.annotation.note, patched.annotation.onset], [2, 'movement', 'arm', 0.15]);
    assert.deepEqual(await json(await annotator.api(`/datasets/${id}/annotations/${a.id}`, send('DELETE', undefined, '"2"')), 200), { revision: 3 });
    assert.deepEqual((await json(await reader.api(`/datasets/${id}/annotations?${q()}`), 200)).annotations, []);
  });

  it('refuses a change based on an old revision with 409, writing nothing', async () => {
    const { revision } = await json(await reader.api(`/datasets/${id}/annotations?${q()}`), 200);
    const made = await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.3, duration: 0, label: 'blink' }, `"${revision}"`)), 201);
    const stale = `"${revision}"`;
    for (const res of [
      await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.4, duration: 0, label: 'late' }, stale)),
      await annotator.api(`/datasets/${id}/annotations/${made.annotations[0].id}`, send('PATCH', { label: 'late' }, stale)),
      await annotator.api(`/datasets/${id}/annotations/${made.annotations[0].id}`, send('DELETE', undefined, stale)),
    ]) {
      assert.equal((await json(res, 409)).error, 'revision_conflict');
    }
    const now = await json(await reader.api(`/datasets/${id}/annotations?${q()}`), 200);
    assert.equal(now.revision, made.revision);
    assert.deepEqual(now.annotations.map((x: { label: string }) => x.label), ['blink']);
    assert.equal((await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.4, duration: 0, label: 'x' }, 'yesterday')), 400)).error, 'validation_failed');
  });

  it('takes exactly one of many concurrent edits based on one revision', async () => {
    const made = await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.5, duration: 0.1, label: 'race' })), 201);
    const base = `"${made.revision}"`;
    const target = made.annotations[0].id;
    // Two people's clients and a third's, each sending many edits from the revision they read.
    const editors = [annotator, maintainer, owner];
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => editors[i % 3]!.api(`/datasets/${id}/annotations/${target}`, send('PATCH', { label: `edit-${i}` }, base))),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 409).length, 29, statuses.join(','));
    const winner = await answers[statuses.indexOf(200)]!.json();
    for (const r of answers) if (r.status !== 200) await r.body?.cancel();
    const now = await json(await reader.api(`/datasets/${id}/annotations?${q()}`), 200);
    assert.equal(now.revision, made.revision + 1);
    assert.equal(now.annotations.find((x: { id: string }) => x.id === target).label, winner.annotation.label);
    // Creations race the same way: of concurrent POSTs from one revision, one is taken.
    const creations = await Promise.all(Array.from({ length: 12 }, (_, i) => annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.6, duration: 0, label: `new-${i}` }, `"${now.revision}"`))));
    assert.equal(creations.filter((r) => r.status === 201).length, 1);
    for (const r of creations) await r.body?.cancel();
  });

  it('lets an annotator change their own only; maintainers and the owner change any; readers none', async () => {
    const made = await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.7, duration: 0.05, label: 'mine' })), 201);
    const aid = made.annotations[0].id;
    assert.equal((await json(await other.api(`/datasets/${id}/annotations/${aid}`, send('PATCH', { label: 'theirs' })), 403)).error, 'forbidden');
    assert.equal((await json(await other.api(`/datasets/${id}/annotations/${aid}`, send('DELETE')), 403)).error, 'forbidden');
    assert.equal((await json(await reader.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.1, duration: 0, label: 'r' })), 403)).error, 'forbidden');
    await json(await maintainer.api(`/datasets/${id}/annotations/${aid}`, send('PATCH', { label: 'checked' })), 200);
    await json(await owner.api(`/datasets/${id}/annotations/${aid}`, send('PATCH', { duration: 0.2 })), 200);
    // Validation against the recording: its channels and its length.
    const bad = await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: duration + 1, duration: 0, label: 'late', channels: ['NOPE'] })), 400);
    assert.ok(bad.details.some((d: string) => d.includes('NOPE')) && bad.details.some((d: string) => d.includes('past the recording')), bad.details.join('\n'));
    assert.equal((await json(await annotator.api(`/datasets/${id}/annotations?path=nowhere.edf`), 404)).error, 'not_found');
  });

  it('keeps every change with its revision, author and time', async () => {
    const made = await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.8, duration: 0, label: 'v1' })), 201);
    const aid = made.annotations[0].id;
    await json(await maintainer.api(`/datasets/${id}/annotations/${aid}`, send('PATCH', { label: 'v2' })), 200);
    const gone = await json(await maintainer.api(`/datasets/${id}/annotations/${aid}`, send('DELETE')), 200);
    const { changes, revision } = await json(await reader.api(`/datasets/${id}/annotations/history?${q()}&after=${made.revision - 1}`), 200);
    assert.equal(revision, gone.revision);
    const mine = changes.filter((ch: { annotation_id: string }) => ch.annotation_id === aid);
    assert.deepEqual(
      mine.map((ch: { revision: number; action: string; author: string; before: { label: string } | null; after: { label: string } | null }) => [ch.revision, ch.action, ch.author, ch.before?.label ?? null, ch.after?.label ?? null]),
      [
        [made.revision, 'create', annotator.user.username, null, 'v1'],
        [made.revision + 1, 'update', maintainer.user.username, 'v1', 'v2'],
        [made.revision + 2, 'delete', maintainer.user.username, 'v2', null],
      ],
    );
    assert.ok(mine.every((ch: { changed_at: string }) => !Number.isNaN(Date.parse(ch.changed_at))));
  });

  it('refuses a history `after` past the largest revision (a PostgreSQL integer) with 400 naming it, not a 500', async () => {
    const largest = await json(await reader.api(`/datasets/${id}/annotations/history?${q()}&after=2147483647`), 200);
    assert.deepEqual(largest.changes, []);
    for (const after of ['2147483648', '9007199254740993', '1e12']) {
      const refused = await json(await reader.api(`/datasets/${id}/annotations/history?${q()}&after=${after}`), 400);
      assert.equal(refused.error, 'validation_failed', after);
      assert.ok(refused.details.some((d: string) => d.startsWith('after')), `${after}: ${refused.details.join('; ')}`);
    }
  });

  it('exports a BIDS events.tsv whose bytes depend on the annotations alone', async () => {
    // A second recording-sized import, made twice in opposite orders on two datasets: the same bytes.
    const marks = [
      { onset: 0.25, duration: 0.5, label: 'seizure', channels: channels.slice(0, 2), hed: 'Sensory-event' },
      { onset: 0.25, duration: 0, label: 'artefact' },
      { onset: 0.1, duration: 0.000001, label: 'tab-here' },
    ];
    const exports: string[] = [];
    for (const order of [marks, [...marks].reverse()]) {
      const ds = await uploadedDataset(server, owner);
      await json(await owner.api(`/datasets/${ds.id}/annotations`, send('POST', order.map((m) => ({ path: ds.recording, ...m })))), 201);
      // The API refuses a tab in a label now; a label stored before may hold one.
      await server.deps.db.updateTable('annotations').set({ label: 'tab\there' }).where('dataset_id', '=', ds.id).where('label', '=', 'tab-here').execute();
      const res = await reader.api(`/datasets/${ds.id}/annotations/export?path=${encodeURIComponent(ds.recording)}&format=tsv`);
      assert.equal(res.status, 404, 'a reader of another dataset reads nothing of it');
      await res.body?.cancel();
      const mine = await owner.api(`/datasets/${ds.id}/annotations/export?path=${encodeURIComponent(ds.recording)}&format=tsv`);
      assert.match(mine.headers.get('content-type') ?? '', /^text\/tab-separated-values/);
      exports.push(await mine.text());
    }
    assert.equal(exports[0], exports[1]);
    const u = owner.user.username;
    assert.equal(
      exports[0],
      [
        'onset\tduration\ttrial_type\tchannel\tHED\tannotator',
        `0.1\t0.000001\ttab here\tn/a\tn/a\t${u}`,
        `0.25\t0\tartefact\tn/a\tn/a\t${u}`,
        `0.25\t0.5\tseizure\t${channels.slice(0, 2).join(',')}\tSensory-event\t${u}`,
        '',
      ].join('\n'),
    );
  });

  it('takes an import of 10,000 annotations in one request, as one revision', async () => {
    const before = await json(await reader.api(`/datasets/${id}/annotations?${q()}`), 200);
    const many = Array.from({ length: 10_000 }, (_, i) => ({ path: recording, onset: (i * duration) / 10_001, duration: 0, label: i % 2 ? 'spike' : 'sharp' }));
    const made = await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', many)), 201);
    assert.equal(made.revision, before.revision + 1);
    assert.equal(made.annotations.length, 10_000);
    const after = await json(await reader.api(`/datasets/${id}/annotations?${q()}`), 200);
    assert.equal(after.annotations.length, before.annotations.length + 10_000);
    assert.equal((await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', [...many, many[0]])), 400)).error, 'validation_failed');
    // Cleared behind the API's back, so the commit below writes a short table.
    await server.deps.db.deleteFrom('annotations').where('label', 'in', ['spike', 'sharp']).execute();
  });

  it('commits the annotations as a new version whose conversion carries them into events and windows', async () => {
    assert.equal((await json(await annotator.api(`/datasets/${id}/annotations/commit`, send('POST', { message: 'marks' })), 403)).error, 'forbidden');
    await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', [{ path: recording, onset: 0.2, duration: 0.15, label: 'seizure' }, { path: recording, onset: 0.6, duration: 0.1, label: 'seizure' }])), 201);
    const committed = await json(await maintainer.api(`/datasets/${id}/annotations/commit`, send('POST', { message: 'Seizures marked by the lab' })), 201);
    assert.equal(committed.version, '1.0.1');
    assert.deepEqual(committed.files, ['CHANGES', recording.replace(/_emg\.\w+$/, '_events.tsv')]);
    await server.worker!.idle();
    const events = await json(await reader.api(`/datasets/${id}/events?${q()}`), 200);
    const seizures = events.events.filter((e: { trial_type?: string }) => e.trial_type === 'seizure');
    assert.deepEqual(seizures.map((e: { onset: number; duration: number; annotator: string }) => [e.onset, e.duration, e.annotator]), [[0.2, 0.15, annotator.user.username], [0.6, 0.1, annotator.user.username]]);
    const windows = await json(await reader.api('/windows', send('POST', { recordings: { dataset: id }, events: { mapping: { seizure: 1 }, length_s: 0.1 } })), 200);
    assert.equal(windows.windows.length, 2);
    assert.deepEqual(windows.windows.map((w: { start_s: number; label: number }) => [w.start_s, w.label]), [[0.2, 1], [0.6, 1]]);
    // Nothing new to commit: no version is made.
    assert.equal((await json(await owner.api(`/datasets/${id}/annotations/commit`, send('POST', { message: 'same' })), 409)).error, 'version_unchanged');
    // A second commit replaces the rows the first wrote instead of adding them again.
    await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0.8, duration: 0.1, label: 'seizure' })), 201);
    const again = await json(await owner.api(`/datasets/${id}/annotations/commit`, send('POST', { message: 'again' })), 201);
    assert.equal(again.version, '1.0.2');
    await server.worker!.idle();
    const twice = await json(await reader.api(`/datasets/${id}/events?${q()}`), 200);
    assert.equal(twice.events.filter((e: { trial_type?: string }) => e.trial_type === 'seizure').length, 3);
  });

  it('keeps the events a recording inherits from higher up the tree when its own events file is written', async () => {
    // The recording has no events file of its own; it takes those of the task's file at the top of the tree.
    const inherited = Buffer.from('onset\tduration\ttrial_type\n0.05\t0.1\tcue\n0.4\t0.05\tcue\n');
    const other = await uploadedDataset(server, owner, 'bids/emg_CustomBipolar', [{ path: 'task-holdWeight_events.tsv', bytes: inherited }]);
    const where = `path=${encodeURIComponent(other.recording)}`;
    const before = await json(await owner.api(`/datasets/${other.id}/events?${where}`), 200);
    assert.deepEqual(before.events.map((e: { onset: number; trial_type: string }) => [e.onset, e.trial_type]), [[0.05, 'cue'], [0.4, 'cue']]);
    await json(await owner.api(`/datasets/${other.id}/annotations`, send('POST', { path: other.recording, onset: 0.2, duration: 0.1, label: 'tremor' })), 201);
    const committed = await json(await owner.api(`/datasets/${other.id}/annotations/commit`, send('POST', { message: 'tremor' })), 201);
    assert.ok(committed.files.includes(other.recording.replace(/_emg\.\w+$/, '_events.tsv')));
    await server.worker!.idle();
    const after = await json(await owner.api(`/datasets/${other.id}/events?${where}`), 200);
    assert.deepEqual(after.events.map((e: { onset: number; trial_type: string }) => [e.onset, e.trial_type]), [[0.05, 'cue'], [0.2, 'tremor'], [0.4, 'cue']]);
  });

  it("answers the labels of the annotations on all the dataset's recordings, most used first, and no other dataset's", async () => {
    const two = await uploadedDataset(server, owner, 'bids/emg_ConcurrentIndependentUnits');
    const { recordings } = await json(await owner.api(`/datasets/${two.id}/recordings`), 200);
    const paths = (recordings as Array<{ path: string }>).map((r) => r.path);
    assert.equal(paths.length, 2, 'a dataset of two recordings');
    const annotate = async (path: string, labels: string[]) =>
      json(await owner.api(`/datasets/${two.id}/annotations`, send('POST', labels.map((label, i) => ({ path, onset: i * 0.01, duration: 0, label })))), 201);
    await annotate(paths[0]!, ['tremor', 'tremor', 'artefact']);
    await annotate(paths[1]!, ['tremor', 'onset', 'onset']);
    const answer = await json(await owner.api(`/datasets/${two.id}/annotations/labels`), 200);
    assert.deepEqual(answer, {
      labels: [
        { label: 'tremor', count: 3, recordings: 2 },
        { label: 'onset', count: 2, recordings: 1 },
        { label: 'artefact', count: 1, recordings: 1 },
      ],
    });
    // The first dataset's labels are its own: none of the second's.
    await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', { path: recording, onset: 0, duration: 0, label: 'first-only' })), 201);
    const first = await json(await reader.api(`/datasets/${id}/annotations/labels`), 200);
    assert.ok(first.labels.some((l: { label: string; count: number; recordings: number }) => l.label === 'first-only' && l.count >= 1 && l.recordings === 1), JSON.stringify(first.labels));
    assert.ok(first.labels.every((l: { label: string }) => !['tremor', 'onset', 'artefact'].includes(l.label)), JSON.stringify(first.labels));
    // The second is private and `reader` no member of it: the unknown id's answer, status and body.
    const hidden = await reader.api(`/datasets/${two.id}/annotations/labels`);
    const unknown = await reader.api('/datasets/nd999999/annotations/labels');
    assert.equal(hidden.status, 404);
    assert.equal((await hidden.text()).replaceAll(two.id, '<id>'), (await unknown.text()).replaceAll('nd999999', '<id>'));
    const anonymous = await fetch(`${server.url}/datasets/${two.id}/annotations/labels`);
    assert.equal(anonymous.status, 404);
  });
});
