import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { affectedRecordings, diffBase, planConversion, type ConversionPlan } from '../../src/conversion/conversion-plan.js';
import type { FoundRecording } from '../../src/formats/bids/find-recordings.js';
import { buildStoreIndex, type StoreIndex } from '../../src/formats/zarr/store-index.js';

const OLD = 'a'.repeat(40);
const NEW = 'b'.repeat(40);

function recording(p: string): FoundRecording {
  return { path: p, zarr: p.replace(/\.[a-z]+$/, '.zarr'), modality: p.split('/')[1] };
}

const rest = recording('sub-01/eeg/sub-01_task-rest_eeg.edf');
const grip = recording('sub-01/emg/sub-01_task-grip_emg.edf');
const nap = recording('sub-02/eeg/sub-02_task-nap_eeg.vhdr');
const broken = recording('sub-03/eeg/sub-03_task-rest_eeg.edf');

/** The index a conversion of `commit` left: a store for each of `stores`, a failure for each of `failures`. */
function indexOf(commit: string | null, stores: FoundRecording[], failures: FoundRecording[] = []): StoreIndex {
  return buildStoreIndex({
    datasetId: 'nd000001',
    contractBase: null,
    dataBase: null,
    sourceCommit: commit,
    stores: stores.map((r) => ({ path: r.path, zarr: r.zarr, updated_utc: '2026-01-01T00:00:00.000Z', modalities: [r.modality], groups: [], n_events: 0, trial_types: [] })),
    failures: failures.map((r) => ({ path: r.path, zarr: r.zarr, code: 'empty_recording', reason: '0 bytes' })),
  });
}

/** The plan as paths: what is converted, what is kept, what is removed. */
function summary(plan: ConversionPlan) {
  return {
    convert: plan.steps.filter((s) => s.action === 'convert').map((s) => s.recording.path),
    keep: plan.steps.filter((s) => s.action !== 'convert').map((s) => `${s.action} ${s.recording.path}`),
    remove: plan.remove,
    total: plan.convertCount,
  };
}

describe('conversion plan', () => {
  it('converts every recording when the copy has no index yet', () => {
    const plan = planConversion({ recordings: [rest, grip], previous: undefined, commit: NEW, changed: undefined, full: false });
    assert.deepEqual(summary(plan), { convert: [rest.path, grip.path], keep: [], remove: [], total: 2 });
  });

  it('converts every recording when the index names no source commit', () => {
    const plan = planConversion({ recordings: [rest, grip], previous: indexOf(null, [rest, grip]), commit: NEW, changed: [], full: false });
    assert.deepEqual(summary(plan).convert, [rest.path, grip.path]);
  });

  it('at the same commit converts only what the index does not know, keeping stores and failures in source order', () => {
    // A re-run after a crash: `grip` was never reached; `broken` failed before and is not retried.
    const plan = planConversion({ recordings: [rest, grip, broken], previous: indexOf(NEW, [rest], [broken]), commit: NEW, changed: undefined, full: false });
    assert.deepEqual(summary(plan), { convert: [grip.path], keep: [`keep_store ${rest.path}`, `keep_failure ${broken.path}`], remove: [], total: 1 });
    const kept = plan.steps.find((s) => s.action === 'keep_store');
    assert.equal(kept?.action === 'keep_store' && kept.store.updated_utc, '2026-01-01T00:00:00.000Z', 'a kept store keeps its entry as it was');
  });

  it("converts again a recording failed for the service's faults, and keeps a failure of the file", () => {
    // `nap` was given up because the store refused its writes; `broken` was refused by the converter.
    const previous = indexOf(OLD, [rest], [broken]);
    previous.failures.push({ path: nap.path, zarr: nap.zarr, code: 'file_read_error', reason: 'the store failed', kind: 'service' });
    const afterPush = planConversion({ recordings: [rest, nap, broken], previous, commit: NEW, changed: ['README'], full: false });
    assert.deepEqual(summary(afterPush), { convert: [nap.path], keep: [`keep_store ${rest.path}`, `keep_failure ${broken.path}`], remove: [], total: 1 });
    // A run at the index's own commit (a regeneration) tries it again too.
    const sameCommit = planConversion({ recordings: [rest, nap, broken], previous, commit: OLD, changed: undefined, full: false });
    assert.deepEqual(summary(sameCommit).convert, [nap.path]);
  });

  it("keeps the failures of an index written before failures had a kind, as the file's", () => {
    // `indexOf` writes failures as older indexes (and external runners) did: without `kind`.
    const plan = planConversion({ recordings: [rest, broken], previous: indexOf(OLD, [rest], [broken]), commit: NEW, changed: ['README'], full: false });
    const kept = plan.steps.find((s) => s.action === 'keep_failure');
    assert.deepEqual(kept?.action === 'keep_failure' && kept.failure, { path: broken.path, zarr: broken.zarr, code: 'empty_recording', reason: '0 bytes', kind: 'file' });
  });

  it('converts again the recordings a job that never published wrote in place, and removes those gone from the source', () => {
    // A job of a later commit wrote `rest`, `nap` and `broken` (then new) in place and was given up; the copy's
    // index is still of OLD, and the commit converted now changed nothing since OLD (a revert) and dropped `broken`.
    const unpublished = [rest, nap, broken].map((r) => ({ path: r.path, zarr: r.zarr }));
    const plan = planConversion({ recordings: [rest, grip, nap], previous: indexOf(OLD, [rest, grip, nap]), commit: NEW, changed: [], full: false, unpublished });
    assert.deepEqual(summary(plan), { convert: [rest.path, nap.path], keep: [`keep_store ${grip.path}`], remove: [broken.zarr], total: 2 });
  });

  it('after a push converts the recordings the changed paths touch, new ones, and removes stores whose source is gone', () => {
    const plan = planConversion({
      recordings: [rest, grip, nap],
      previous: indexOf(OLD, [rest, grip, broken]),
      commit: NEW,
      changed: ['sub-01/emg/sub-01_task-grip_channels.tsv', 'README'],
      full: false,
    });
    // grip: its channels.tsv changed; nap: new to the tree, converted though the diff does not name it; rest: untouched.
    assert.deepEqual(summary(plan), { convert: [grip.path, nap.path], keep: [`keep_store ${rest.path}`], remove: [broken.zarr], total: 2 });
  });

  it('after a push whose diff is unknown converts everything', () => {
    const plan = planConversion({ recordings: [rest, grip], previous: indexOf(OLD, [rest, grip]), commit: NEW, changed: undefined, full: false });
    assert.deepEqual(summary(plan).convert, [rest.path, grip.path]);
  });

  it('converts everything when asked for a full conversion, whatever the index says', () => {
    const plan = planConversion({ recordings: [rest, grip], previous: indexOf(NEW, [rest, grip]), commit: NEW, changed: [], full: true });
    assert.deepEqual(summary(plan).convert, [rest.path, grip.path]);
    assert.deepEqual(summary(plan).keep, []);
  });

  it('diffs from the previous commit only when there is one, it differs, and the conversion is not full', () => {
    assert.equal(diffBase(undefined, NEW, false), undefined);
    assert.equal(diffBase(indexOf(null, []), NEW, false), undefined);
    assert.equal(diffBase(indexOf(NEW, []), NEW, false), undefined);
    assert.equal(diffBase(indexOf(OLD, []), NEW, true), undefined);
    assert.equal(diffBase(indexOf(OLD, []), NEW, false), OLD);
  });

  it('takes a sidecar to touch every recording at its level and below (BIDS inheritance)', () => {
    const all = [rest, grip, nap];
    assert.deepEqual([...affectedRecordings(all, ['task-rest_events.json'])].sort(), [nap.path, rest.path, grip.path].sort());
    assert.deepEqual([...affectedRecordings(all, ['sub-01/sub-01_electrodes.tsv'])].sort(), [grip.path, rest.path].sort());
    assert.deepEqual([...affectedRecordings(all, ['sub-02/eeg/sub-02_task-nap_eeg.eeg'])], [nap.path]);
    assert.deepEqual([...affectedRecordings(all, ['sub-02/eeg/notes.txt', 'CHANGES'])], []);
  });
});
