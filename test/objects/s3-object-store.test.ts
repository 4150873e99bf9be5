import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { S3ObjectStore } from '../../src/objects/s3-object-store.js';
import { objectStoreContract } from './object-store.contract.js';

// A real S3 server that checks signatures (scripts/ci/services/radosgw.sh; TEST_S3_URL from scripts/ci/env.sh).
const url = process.env.TEST_S3_URL;
objectStoreContract(
  'S3 store (radosgw)',
  async () => {
    const store = S3ObjectStore.fromUrl(url!);
    return { store, close: () => store.close() };
  },
  { skip: url ? undefined : 'TEST_S3_URL is not set (run scripts/ci/services/radosgw.sh and source scripts/ci/env.sh)' },
);

describe('S3 store: copying an object to a new file over one plain GET', { skip: url ? undefined : 'TEST_S3_URL is not set' }, () => {
  let store: S3ObjectStore;
  let dir: string;
  const prefix = `test-s3-copy/${Date.now()}-${randomBytes(4).toString('hex')}`;
  before(async () => {
    store = S3ObjectStore.fromUrl(url!);
    dir = await mkdtemp(path.join(tmpdir(), 'nds-s3-copy-'));
  });
  after(async () => {
    await store.deletePrefix(`${prefix}/`);
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('writes the object whole and answers its size and SHA-256', async () => {
    const bytes = randomBytes(7 * 1024 * 1024 + 3);
    await store.put(`${prefix}/a`, bytes);
    const file = path.join(dir, 'a');
    assert.deepEqual(await store.copyToNewFile(`${prefix}/a`, file), { size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    assert.ok((await readFile(file)).equals(bytes));
    await store.put(`${prefix}/empty`, Buffer.alloc(0));
    assert.equal((await store.copyToNewFile(`${prefix}/empty`, path.join(dir, 'empty')))?.size, 0);
  });

  it('answers undefined for a missing object and leaves no file; never writes over a file', async () => {
    const file = path.join(dir, 'missing');
    assert.equal(await store.copyToNewFile(`${prefix}/missing`, file), undefined);
    assert.equal(existsSync(file), false);
    await store.put(`${prefix}/b`, Buffer.from('b'));
    await assert.rejects(store.copyToNewFile(`${prefix}/b`, path.join(dir, 'a')), { code: 'EEXIST' });
    assert.equal((await readFile(path.join(dir, 'a'))).length, 7 * 1024 * 1024 + 3, 'the file there is as it was');
  });
});

