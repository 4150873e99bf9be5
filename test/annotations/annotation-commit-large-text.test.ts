/**
 * An annotation commit into a hosted repository reads `CHANGES` and each annotated recording's `_events.tsv`.
 * A file kept as a git-lfs or annex pointer is read from the dataset's content object, which may be of any
 * size (up to the owner's quota): one larger than nds reads of a sidecar (16 MiB) is refused in words before a
 * byte of it is read. Before, it was read whole into memory, blocking the server while it read.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, openSync, closeSync, ftruncateSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { insertDatasetRows } from '../support/datasets.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { gitIn, gitRun, makeBidsRepo, pushRemote } from '../conversion/support.js';
import { pushAndConvert } from './support.js';
import type { FileObjectStore } from '../../src/objects/file-object-store.js';

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });
/** Larger than any string V8 makes (the read fails after it is done), yet sparse: no disk is used. */
const BIG = 600 * 1024 * 1024;

describe('an annotation commit and a pointer to a large content object', { timeout: 180_000 }, () => {
  let server: TestServer;
  let owner: TestAccount;
  let repo: string;
  const id = 'nd000412';
  const eeg = 'sub-02/eeg/sub-02_task-rest_eeg.edf';
  before(async () => {
    server = await startTestServer({ env: { MAX_GIT_FILE_BYTES: String(4 << 20) } });
    owner = await createAccount(server);
    repo = makeBidsRepo();
    await insertDatasetRows(server.deps.db, { id, name: 'Hosted and annotated', owner_id: owner.user.id, visibility: 'private' });
    await pushAndConvert(server, repo, id, owner.key);
  });
  after(async () => {
    await server?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it('does not read a content object of hundreds of megabytes whole to merge CHANGES', async () => {
    // The owner's own large content object (as an upload would leave it; sparse here), and CHANGES a pointer to it.
    const sha = 'ab'.repeat(32);
    const file = (server.deps.objects as FileObjectStore).pathOf(`${id}/objects/${sha}`);
    mkdirSync(path.dirname(file), { recursive: true });
    const fd = openSync(file, 'w');
    ftruncateSync(fd, BIG);
    closeSync(fd);
    writeFileSync(path.join(repo, 'CHANGES'), `version https://git-lfs.github.com/spec/v1\noid sha256:${sha}\nsize ${BIG}\n`);
    gitIn(repo, 'add', 'CHANGES');
    gitIn(repo, 'commit', '-q', '-m', 'CHANGES as a pointer');
    const pushed = await gitRun(repo, 'push', '-q', pushRemote(server.url, id, owner.key), 'main');
    assert.equal(pushed.status, 0, pushed.stderr);

    const objects = server.deps.objects;
    const readAll = objects.readAll.bind(objects);
    const wholeReads: Array<{ key: string; bytes: number }> = [];
    objects.readAll = async (key: string) => {
      try {
        const got = await readAll(key);
        wholeReads.push({ key, bytes: got?.length ?? 0 });
        return got;
      } catch (err) {
        wholeReads.push({ key, bytes: -1 });
        throw err;
      }
    };
    try {
      const made = await owner.api(`/datasets/${id}/annotations`, post({ path: eeg, onset: 0.5, duration: 0.25, label: 'spike' }));
      assert.equal(made.status, 201, await made.text());
      const committed = await owner.api(`/datasets/${id}/annotations/commit`, post({ message: 'Spikes' }));
      const answer = await committed.text();
      assert.equal(committed.status, 409, answer);
      assert.match(answer, /CHANGES is 629,145,600 bytes, more than the 16 MiB nds reads of a text file to commit annotations into/);
      const largest = Math.max(0, ...wholeReads.map((r) => r.bytes));
      assert.ok(
        largest <= 16 * 1024 * 1024,
        `the commit (answered ${committed.status}: ${answer.slice(0, 160)}) read ${largest.toLocaleString('en')} bytes of ${wholeReads.find((r) => r.bytes === largest)?.key} into memory at once`,
      );
    } finally {
      objects.readAll = readAll;
    }
  });
});
