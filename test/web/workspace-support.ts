/**
 * Helpers of the workspace tests: a BIDS repository where some recordings cannot be converted (a truncated
 * EDF, a BrainVision recording with a 0-byte .eeg), converted by the real pipeline, and dataset rows with
 * recording facts for the search pages.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { setRecordingFacts } from '../../src/datasets/dataset-queries.js';
import type { RecordingFacts, Visibility } from '../../src/db/datasets-tables.js';
import { fixtures, gitIn, hostCopy, hostedSource } from '../conversion/support.js';
import type { TestAccount } from '../support/accounts.js';
import type { TestServer } from '../support/test-server.js';

/** Paths of the recordings in `makeRepoWithFailures`. */
export const GOOD = 'sub-01/eeg/sub-01_task-rest_eeg.edf';
export const TRUNCATED = 'sub-02/eeg/sub-02_task-rest_eeg.edf';
export const EMPTY_EEG = 'sub-03/eeg/sub-03_task-rest_eeg.vhdr';

/** A git repository: one good EDF, one EDF cut in half, one BrainVision recording whose .eeg has 0 bytes. */
export function makeRepoWithFailures(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'nds-failures-repo-'));
  writeFileSync(path.join(dir, 'dataset_description.json'), JSON.stringify({ Name: 'Failures', BIDSVersion: '1.9.0' }));
  for (const sub of ['sub-01', 'sub-02', 'sub-03']) mkdirSync(path.join(dir, sub, 'eeg'), { recursive: true });
  cpSync(path.join(fixtures, 'mne-python/edf/test.edf'), path.join(dir, GOOD));
  const edf = readFileSync(path.join(fixtures, 'mne-python/edf/test.edf'));
  writeFileSync(path.join(dir, TRUNCATED), edf.subarray(0, Math.floor(edf.length / 2)));
  const vhdr = readFileSync(path.join(fixtures, 'mne-python/brainvision/test.vhdr'), 'latin1')
    .replace('DataFile=test.eeg', 'DataFile=sub-03_task-rest_eeg.eeg')
    .replace('MarkerFile=test.vmrk', 'MarkerFile=sub-03_task-rest_eeg.vmrk');
  writeFileSync(path.join(dir, EMPTY_EEG), vhdr, 'latin1');
  const vmrk = readFileSync(path.join(fixtures, 'mne-python/brainvision/test.vmrk'), 'latin1').replace('DataFile=test.eeg', 'DataFile=sub-03_task-rest_eeg.eeg');
  writeFileSync(path.join(dir, 'sub-03/eeg/sub-03_task-rest_eeg.vmrk'), vmrk, 'latin1');
  writeFileSync(path.join(dir, 'sub-03/eeg/sub-03_task-rest_eeg.eeg'), '');
  gitIn(dir, 'init', '-q');
  gitIn(dir, 'add', '-A');
  gitIn(dir, 'commit', '-q', '-m', 'recordings');
  return dir;
}

/** A dataset row whose source is `repo`, converted by the real pipeline (admin regenerate, the in-process worker). */
export async function convertRepoDataset(server: TestServer, admin: TestAccount, options: { id: string; name: string; ownerId: number; repo: string; visibility: Visibility }): Promise<void> {
  hostCopy(server.config.gitDir, options.id, options.repo);
  await server.deps.db
    .insertInto('datasets')
    .values({ id: options.id, name: options.name, owner_id: options.ownerId, visibility: options.visibility, source_repo: hostedSource, latest_version: '1.0.0', n_subjects: null, license: null, doi: null, concept_doi: null, publication_status: null, zarr_status: null, zarr_converted_at: null, zarr_store_count: null, zarr_index_etag: null, zarr_source_commit: null })
    .execute();
  const r = await admin.api(`/admin/datasets/${options.id}/zarr/regenerate`, { method: 'POST', body: JSON.stringify({ full: true }) });
  assert.equal(r.status, 202, await r.text());
  await server.worker!.idle();
}

let counter = 0;

/** A dataset row with recording facts, as a conversion would leave them (for search and cards). */
export async function insertSearchableDataset(
  server: TestServer,
  options: { id: string; name: string; ownerId: number; visibility?: Visibility; description?: string; facts: Partial<RecordingFacts>; doi?: string },
): Promise<void> {
  counter++;
  await server.deps.db
    .insertInto('datasets')
    .values({ id: options.id, name: options.name, description: options.description ?? '', owner_id: options.ownerId, visibility: options.visibility ?? 'public', source_repo: null, latest_version: '1.0.0', n_subjects: null, license: 'CC0-1.0', doi: options.doi ?? null, concept_doi: null, publication_status: options.doi ? 'published' : null, zarr_status: 'ready', zarr_converted_at: new Date(), zarr_store_count: options.facts.n_recordings ?? 1, zarr_index_etag: null, zarr_source_commit: null })
    .execute();
  const facts: RecordingFacts = {
    n_recordings: 1, modalities: ['eeg'], tasks: ['rest'], sampling_rates: [256], channel_counts: [64], trial_types: [], n_subjects: 1, source_commit: null, failure_count: 0, duration_s: 3600,
    ...options.facts,
  };
  await setRecordingFacts(server.deps.db, options.id, facts);
}
