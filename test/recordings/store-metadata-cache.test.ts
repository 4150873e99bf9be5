import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FileObjectStore } from '../../src/objects/file-object-store.js';
import { StoreMetadataCache } from '../../src/recordings/store-metadata-cache.js';

/** A store's root and one group, as the converter writes their metadata (docs/conversion.md, "The store"). */
async function writeStore(objects: FileObjectStore, zarr: string, rate: number): Promise<void> {
  const put = (key: string, value: unknown) => objects.put(`nd000001/zarr/${zarr}/${key}`, Buffer.from(JSON.stringify(value)));
  await put('zarr.json', { zarr_format: 3, node_type: 'group', attributes: { channel_groups: [{ name: 'eeg', rate, n_samples: rate * 10 }] } });
  await put('eeg/zarr.json', { zarr_format: 3, node_type: 'group', attributes: { rate, n_samples: rate * 10, modality: 'eeg', channels: [{ label: 'Cz', type: 'EEG', unit: 'uV' }] } });
  await put('eeg/0/zarr.json', { zarr_format: 3, node_type: 'array', data_type: 'int16', chunk_grid: { name: 'regular', configuration: { chunk_shape: [64, 1024] } }, attributes: { scale: [0.5], offset: [0] } });
}

/** Counts the reads of whole objects (`get`) that go through it. */
function counted(objects: FileObjectStore) {
  const counts = { get: 0 };
  return { counts, store: { get: (key: string) => (counts.get++, objects.get(key)), head: (key: string) => objects.head(key) } };
}

describe('StoreMetadataCache: store metadata kept by the root entity tag', () => {
  let dir: string;
  let objects: FileObjectStore;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'nds-meta-cache-'));
    objects = new FileObjectStore(dir);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('reads a store once, then checks only its root entity tag', async () => {
    await writeStore(objects, 'a', 256);
    const { counts, store } = counted(objects);
    const cache = new StoreMetadataCache(store);
    assert.equal((await cache.read('nd000001', 'a'))?.groups[0]?.rate, 256);
    const reads = counts.get;
    assert.equal((await cache.read('nd000001', 'a'))?.groups[0]?.channels[0]?.scale, 0.5);
    assert.equal(counts.get, reads);
  });

  it('sees a store rewritten by a new conversion at the next read', async () => {
    await writeStore(objects, 'b', 256);
    const cache = new StoreMetadataCache(objects);
    const before = await cache.read('nd000001', 'b');
    await writeStore(objects, 'b', 512);
    const after = await cache.read('nd000001', 'b');
    assert.notEqual(after?.etag, before?.etag);
    assert.equal(after?.groups[0]?.rate, 512);
  });

  it('answers undefined for a store that is gone, and keeps no more stores than its bound', async () => {
    const cache = new StoreMetadataCache(objects, 2);
    for (const zarr of ['c', 'd', 'e']) {
      await writeStore(objects, zarr, 100);
      await cache.read('nd000001', zarr);
    }
    assert.equal(cache.size, 2);
    await objects.delete('nd000001/zarr/e/zarr.json');
    assert.equal(await cache.read('nd000001', 'e'), undefined);
  });
});
