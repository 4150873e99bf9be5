/**
 * The API refuses terminal and text-direction controls in what other people's tools print and nds's mails
 * quote: a dataset's name, keywords, license and authors, and annotation labels (a description keeps its line
 * breaks and tabs). Clients escape such text too (test/cli/terminal-text.test.ts); this is the other half.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createBrowserSession, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from './support.js';
import { uploadedDataset } from '../annotations/support.js';

const send = (method: string, body?: unknown): RequestInit => ({ method, body: body === undefined ? undefined : JSON.stringify(body) });

describe('control characters in dataset fields and annotation labels', { timeout: 120_000 }, () => {
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
