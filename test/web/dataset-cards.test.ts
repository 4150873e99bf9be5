/** What the home page says of a dataset: hours of signal, the Zarr state, and what needs its owner's action. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Dataset } from '../../src/datasets/dataset-queries.js';
import { formatHours, neededActions, zarrState } from '../../src/web/dataset-cards.js';

/** Facts of the last conversion, as stored under `metadata.recording`. */
const failed = (failure_count: number) => ({ recording: { failure_count } }) as unknown as Dataset['metadata'];

function dataset(fields: Partial<Dataset>): Dataset {
  return {
    id: 'nd000001', name: 'D', description: '', owner_id: 1, owner_username: 'ada', visibility: 'private', sandbox: false, source_repo: null, external_ids: [], license: null, authors: [], keywords: [], modalities: [], tasks: [], n_subjects: null, size_bytes: 0, metadata: {},
    latest_version: '1.0.0', doi: null, concept_doi: null, publication_status: null, zarr_status: 'ready', zarr_converted_at: null, zarr_store_count: 1, zarr_index_etag: null, zarr_source_commit: null, sampling_rates: [], channel_counts: [], search_vector: null, created_at: new Date(), updated_at: new Date(),
    ...fields,
  } as Dataset;
}

describe('dataset cards', () => {
  it('writes hours of signal for people', () => {
    assert.equal(formatHours(undefined), '–');
    assert.equal(formatHours(0), '0 h');
    assert.equal(formatHours(7.9), '8 s');
    assert.equal(formatHours(300), '5 min');
    assert.equal(formatHours(3 * 3600 + 600), '3.2 h');
    assert.equal(formatHours(176 * 3600), '176 h');
  });

  it('tells a copy with failures from a clean one', () => {
    assert.equal(zarrState(dataset({ zarr_status: null })), 'not converted');
    assert.equal(zarrState(dataset({ metadata: failed(0) })), 'ready');
    assert.equal(zarrState(dataset({ metadata: failed(2) })), 'ready, 2 failed');
    assert.equal(zarrState(dataset({ zarr_status: 'converting', metadata: failed(2) })), 'converting');
  });

  it('names what needs the owner, and nothing for a published dataset', () => {
    assert.deepEqual(neededActions(dataset({ visibility: 'public', publication_status: 'published', doi: '10.1/x' })), []);
    assert.match(neededActions(dataset({ latest_version: null })).join(), /Empty: upload/);
    assert.match(neededActions(dataset({ zarr_status: 'failed' })).join(), /conversion failed/);
    assert.match(neededActions(dataset({ metadata: failed(1) })).join(), /1 recording could not be converted/);
    assert.match(neededActions(dataset({ publication_status: 'denied' })).join(), /denied/);
    assert.deepEqual(neededActions(dataset({ publication_status: 'pending' })), [], 'waiting on an administrator, not on the owner');
    assert.deepEqual(neededActions(dataset({ sandbox: true })), []);
  });
});
