/** `nds datasets annotations import|list|export|commit` against a real server: an events.tsv in, the same table out. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { TestAccount } from '../support/accounts.js';
import { nds } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader } from '../datasets/support.js';
import { uploadedDataset } from '../annotations/support.js';

describe('nds datasets annotations', () => {
  let server: TestServer;
  let owner: TestAccount;
  let tmp: string;
  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    tmp = mkdtempSync(path.join(os.tmpdir(), 'nds-annotations-'));
  });
  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('imports an events.tsv, lists it, exports the same table and commits it as a version', async () => {
    const env = { NDS_API_URL: server.url, NDS_API_KEY: owner.key, XDG_CONFIG_HOME: tmp };
    const { id, recording, channels } = await uploadedDataset(server, owner);
    const table = ['onset\tduration\ttrial_type\tchannel\tHED\tannotator', `0.2\t0.1\tspike\t${channels[0]}\tn/a\t${owner.user.username}`, `0.5\t0\tblink\tn/a\tn/a\t${owner.user.username}`, ''].join('\n');
    const file = path.join(tmp, 'marks.tsv');
    writeFileSync(file, table);
    const imported = await nds(['datasets', 'annotations', 'import', id, recording, file], env);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stderr, /2 annotations added; revision 1/);
    const listed = JSON.parse((await nds(['datasets', 'annotations', 'list', id, recording, '--json'], env)).stdout);
    assert.deepEqual(listed.annotations.map((a: { label: string }) => a.label), ['spike', 'blink']);
    const labels = await nds(['datasets', 'annotations', 'labels', id], env);
    assert.equal(labels.code, 0, labels.stderr);
    assert.match(labels.stdout, /blink\s+1\s+1/);
    assert.match(labels.stdout, /spike\s+1\s+1/);
    const exported = await nds(['datasets', 'annotations', 'export', id, recording], env);
    assert.equal(exported.stdout, table);
    const committed = await nds(['datasets', 'annotations', 'commit', id, '-m', 'first marks', '--json'], env);
    assert.equal(committed.code, 0, committed.stderr);
    assert.equal(JSON.parse(committed.stdout).version, '1.0.1');
  });
});
