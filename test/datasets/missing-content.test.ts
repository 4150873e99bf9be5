/**
 * Which contents of a manifest the store lacks (`missingContent`): by a HEAD of each content key for a few
 * contents, by one listing of `<id>/objects/` for many. In the listing only keys named by a SHA-256 directly
 * under the prefix count as content: any other key proves nothing about the content it happens to be named after.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FileObjectStore } from '../../src/objects/file-object-store.js';
import { missingContent } from '../../src/datasets/versions.js';

describe('missingContent', () => {
  let root: string;
  let objects: FileObjectStore;
  before(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'nds-missing-content-'));
    objects = new FileObjectStore(root);
  });
  after(async () => {
    await objects.close?.();
    await rm(root, { recursive: true, force: true });
  });

  for (const count of [3, 300]) {
    it(`counts only content keys as present, for ${count} contents (${count > 256 ? 'one listing' : 'a HEAD each'})`, async () => {
      const id = `sb${String(count).padStart(6, '0')}`;
      const real = Array.from({ length: count }, (_, i) => Buffer.from(`content ${i}`));
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      // Half the contents are stored at their keys; the other half only under names no hash checks.
      for (const [i, bytes] of real.entries()) {
        const key = i % 2 === 0 ? `${id}/objects/${sha(bytes)}` : `${id}/objects/junk/${sha(bytes)}`;
        await objects.put(key, bytes, { sha256: i % 2 === 0 ? sha(bytes) : undefined });
      }
      await objects.put(`${id}/objects/${randomBytes(32).toString('hex')}.tmp`, Buffer.from('x'));
      const manifest = real.map((bytes, i) => ({ path: `f${i}.txt`, size: bytes.length, sha256: sha(bytes) }));
      const missing = await missingContent({ objects }, id, manifest);
      assert.deepEqual(
        missing.map((e) => e.path),
        manifest.filter((_, i) => i % 2 === 1).map((e) => e.path),
      );
    });
  }

  it('groups a manifest of 200,000 files of one content in linear time (a list copied per file held the server for minutes)', async () => {
    const empty = createHash('sha256').update('').digest('hex');
    await objects.put(`sb000009/objects/${empty}`, Buffer.alloc(0), { sha256: empty });
    const manifest = Array.from({ length: 200_000 }, (_, i) => ({ path: `sub-01/empty-${i}.txt`, size: 0, sha256: empty }));
    const started = performance.now();
    assert.deepEqual(await missingContent({ objects }, 'sb000009', manifest), []);
    const ms = performance.now() - started;
    // Linear: tens of milliseconds. Quadratic: 2e10 entries copied, minutes.
    assert.ok(ms < 5000, `${Math.round(ms)} ms`);
  });
});
