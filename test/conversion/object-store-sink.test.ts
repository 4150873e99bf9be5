import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ObjectStoreSink } from '../../src/conversion/object-store-sink.js';
import { FileObjectStore } from '../../src/objects/file-object-store.js';

describe('ObjectStoreSink', () => {
  let root: string;
  let objects: FileObjectStore;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'nds-store-sink-'));
    objects = new FileObjectStore(root);
  });
  after(() => rm(root, { recursive: true, force: true }));

  const keys = async (prefix: string) => {
    const found: string[] = [];
    for await (const info of objects.list(prefix)) found.push(info.key.slice(prefix.length));
    return found.sort();
  };
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('writes a new store, its root zarr.json only at commit', async () => {
    const sink = new ObjectStoreSink(objects, 'ds/zarr/a.zarr/');
    await sink.put('eeg/0/c/0/0', bytes('chunk'));
    await sink.put('eeg/zarr.json', bytes('{}'));
    await sink.put('zarr.json', bytes('{"root":1}'));
    assert.deepEqual(await keys('ds/zarr/a.zarr/'), ['eeg/0/c/0/0'], 'metadata is held back until commit');
    await sink.commit();
    assert.deepEqual(await keys('ds/zarr/a.zarr/'), ['eeg/0/c/0/0', 'eeg/zarr.json', 'zarr.json']);
  });

  it('written over an older store, keeps none of its objects that the new store does not have', async () => {
    // A recording converted again with fewer chunks (or other groups): a reader of the new store must not find the old ones.
    const old = new ObjectStoreSink(objects, 'ds/zarr/b.zarr/');
    for (const key of ['eeg/0/c/0/0', 'eeg/0/c/0/1', 'eeg/view/1/c/0/0/0', 'eeg/zarr.json', 'zarr.json']) await old.put(key, bytes(`old ${key}`));
    await old.commit();
    const next = new ObjectStoreSink(objects, 'ds/zarr/b.zarr/');
    for (const key of ['eeg/0/c/0/0', 'eeg/zarr.json', 'zarr.json']) await next.put(key, bytes(`new ${key}`));
    await next.commit();
    assert.deepEqual(await keys('ds/zarr/b.zarr/'), ['eeg/0/c/0/0', 'eeg/zarr.json', 'zarr.json']);
    assert.equal((await objects.readAll('ds/zarr/b.zarr/eeg/0/c/0/0'))!.toString(), 'new eeg/0/c/0/0');
    assert.deepEqual(await keys('ds/zarr/a.zarr/'), ['eeg/0/c/0/0', 'eeg/zarr.json', 'zarr.json'], 'another store is left alone');
  });

  it('discard removes the store, old and new objects alike', async () => {
    const sink = new ObjectStoreSink(objects, 'ds/zarr/b.zarr/');
    await sink.put('eeg/0/c/0/7', bytes('half'));
    await sink.discard();
    assert.deepEqual(await keys('ds/zarr/b.zarr/'), []);
  });
});
