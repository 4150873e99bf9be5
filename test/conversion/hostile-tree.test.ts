/**
 * A pushed tree is hostile input (docs/security.md, "Uploaded trees are hostile"). A verified account without
 * upload approval makes a sandbox dataset and pushes recordings whose files are links to a secret of the
 * server (`<DATA_DIR>/object-signing-secret`, the key of presigned URLs and object tokens) or name it from a
 * header: none of its bytes ever come back through the signal route, and the owner sees why each recording
 * was not converted. A good recording of the same push converts as usual.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { objectUrlSigner } from '../../src/objects/signing-secret.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { fixtures, gitIn, gitRun } from './support.js';

/** A one-channel INT_16 BrainVision header: any file of 2 bytes or more would read as samples. */
function vhdr(dataFile: string): string {
  return [
    'Brain Vision Data Exchange Header File Version 1.0',
    '',
    '[Common Infos]',
    'Codepage=UTF-8',
    `DataFile=${dataFile}`,
    'DataFormat=BINARY',
    'DataOrientation=MULTIPLEXED',
    'NumberOfChannels=1',
    'SamplingInterval=1000',
    '',
    '[Binary Infos]',
    'BinaryFormat=INT_16',
    '',
    '[Channel Infos]',
    'Ch1=Leak,,1,µV',
    '',
  ].join('\r\n');
}

const rec = (sub: string, ext: string) => `sub-${sub}/eeg/sub-${sub}_task-a_eeg${ext}`;

describe('a pushed tree that points at secrets of the server', () => {
  let server: TestServer;
  let attacker: TestAccount;
  let work: string;
  let id: string;
  let secret: Buffer;

  before(async () => {
    server = await startTestServer();
    // The server's own secret, made as the server makes it.
    objectUrlSigner({ dataDir: server.dataDir, objectSigningSecret: undefined });
    const secretFile = path.join(server.dataDir, 'object-signing-secret');
    secret = readFileSync(secretFile);
    attacker = await createAccount(server, { status: 'verified' });
    const made = await attacker.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'innocent' }) });
    const body = await made.text();
    assert.equal(made.status, 201, body);
    id = (JSON.parse(body) as { id: string }).id;
    assert.match(id, /^sb\d{6}$/, 'an account without upload approval gets a sandbox dataset');

    work = mkdtempSync(path.join(os.tmpdir(), 'nds-hostile-'));
    const file = (rel: string, content: string | Buffer) => {
      mkdirSync(path.dirname(path.join(work, rel)), { recursive: true });
      writeFileSync(path.join(work, rel), content);
    };
    const link = (rel: string, target: string) => {
      mkdirSync(path.dirname(path.join(work, rel)), { recursive: true });
      symlinkSync(target, path.join(work, rel));
    };
    const edf = path.join(fixtures, 'mne-python/edf/test.edf');
    file('dataset_description.json', JSON.stringify({ Name: 'innocent', BIDSVersion: '1.9.0' }));
    // 01: the data file is a link to the secret.
    file(rec('01', '.vhdr'), vhdr(path.basename(rec('01', '.eeg'))));
    link(rec('01', '.eeg'), secretFile);
    // 02: the header climbs out of the tree, and a link of the name it ends in waits beside it.
    file(rec('02', '.vhdr'), vhdr(`../../../../../../../../../../..${secretFile}`));
    link('sub-02/eeg/object-signing-secret', secretFile);
    // 03: the header names the secret by its absolute path.
    file(rec('03', '.vhdr'), vhdr(secretFile));
    // 04: the header names a file through a linked folder.
    file(rec('04', '.vhdr'), vhdr('server/object-signing-secret'));
    link('sub-04/eeg/server', server.dataDir);
    // 05-07: good recordings with a linked sidecar each.
    for (const sub of ['05', '06', '07']) {
      mkdirSync(path.join(work, `sub-${sub}/eeg`), { recursive: true });
      copyFileSync(edf, path.join(work, rec(sub, '.edf')));
    }
    link('sub-05/eeg/sub-05_task-a_channels.tsv', secretFile);
    link('sub-06/eeg/sub-06_task-a_events.tsv', secretFile);
    link('sub-07/eeg/sub-07_task-a_eeg.json', secretFile);
    // 08: a linked folder of recordings; 09: a good recording, the control.
    link('sub-08', server.dataDir);
    mkdirSync(path.join(work, 'sub-09/eeg'), { recursive: true });
    copyFileSync(edf, path.join(work, rec('09', '.edf')));
    gitIn(work, 'init', '-q');
    gitIn(work, 'add', '-A');
    gitIn(work, 'commit', '-q', '-m', 'recordings');

    const remote = new URL(`${server.url}/git/${id}.git`);
    remote.username = 'nds';
    remote.password = attacker.key;
    const pushed = await gitRun(work, 'push', '-q', remote.toString(), 'main');
    assert.equal(pushed.status, 0, pushed.stderr);
    for (let waited = 0; !(await server.deps.db.selectFrom('conversion_jobs').select('id').where('dataset_id', '=', id).executeTakeFirst()); waited += 50) {
      assert.ok(waited < 20_000, 'the push queued no conversion');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await server.worker!.idle();
  });
  after(async () => {
    await server?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('never answers the secret through the signal route', async () => {
    const leaked = Array.from({ length: Math.floor(secret.length / 2) }, (_, i) => secret.readInt16LE(2 * i));
    for (const sub of ['01', '02', '03', '04']) {
      const res = await attacker.api(`/datasets/${id}/signal?path=${rec(sub, '.vhdr')}&start_sample=0&n_samples=${leaked.length}&format=json`);
      const body = await res.text();
      assert.notEqual(res.status, 200, `${rec(sub, '.vhdr')} answered ${body.slice(0, 200)}`);
      assert.ok(!body.includes(leaked.slice(0, 4).join(',')), 'the answer holds the secret');
    }
    for (const answer of [await attacker.api(`/datasets/${id}/recordings`), await attacker.api(`/datasets/${id}`)]) {
      assert.ok(!(await answer.text()).includes(secret.toString('utf8').trim()), 'an answer holds the secret');
    }
  });

  it('tells the owner why each linked recording was not converted, and converts the good one', async () => {
    const d = (await (await attacker.api(`/datasets/${id}`)).json()) as { zarr_status: string };
    assert.equal(d.zarr_status, 'ready');
    const listed = (await (await attacker.api(`/datasets/${id}/recordings`)).json()) as {
      recordings: Array<{ path: string }>;
      failures: Array<{ path: string; code: string; reason: string }>;
    };
    assert.deepEqual(listed.recordings.map((r) => r.path), [rec('09', '.edf')]);
    const reasons = new Map(listed.failures.map((f) => [f.path, f]));
    const linked = /is a symbolic link in the repository/;
    assert.match(reasons.get(rec('01', '.vhdr'))?.reason ?? '', linked);
    assert.match(reasons.get(rec('02', '.vhdr'))?.reason ?? '', linked);
    // A name that climbs out or is absolute means the file of that name beside the header, which is not there.
    assert.match(reasons.get(rec('03', '.vhdr'))?.reason ?? '', /does not exist/);
    assert.match(reasons.get(rec('04', '.vhdr'))?.reason ?? '', /does not exist/);
    assert.match(reasons.get(rec('05', '.edf'))?.reason ?? '', /sub-05_task-a_channels\.tsv is a symbolic link/);
    assert.match(reasons.get(rec('06', '.edf'))?.reason ?? '', /sub-06_task-a_events\.tsv is a symbolic link/);
    assert.match(reasons.get(rec('07', '.edf'))?.reason ?? '', /sub-07_task-a_eeg\.json is a symbolic link/);
    for (const f of listed.failures) assert.equal(f.code, 'file_read_error', f.path);
    // Nothing under the linked folder sub-08 was looked at.
    assert.ok(listed.failures.every((f) => !f.path.startsWith('sub-08/')));
  });
});
