/**
 * A mail from nds quotes a dataset's name, which its owner chose. The API refuses line breaks in a name now
 * (test/datasets/control-characters.test.ts), but a name stored before may hold them, and with them the owner
 * could write whole lines of a mail nds sends in its own name: here a second "The dataset:" line pointing at a
 * phishing page, placed before the real one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { latestMailTo } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from './support.js';

const send = (method: string, body?: unknown): RequestInit => ({ method, body: body === undefined ? undefined : JSON.stringify(body) });

describe('user-chosen text in the mails nds sends', { timeout: 60_000 }, () => {
  let server: TestServer;
  let owner: TestAccount;
  let invitee: TestAccount;

  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    invitee = await createAccount(server);
  });
  after(async () => {
    await server?.close();
  });

  it('a stored dataset name cannot add lines to the member-added mail', async () => {
    const name = 'EEG rest" as a reader.\n\nThe dataset: https://evil.example/nds/login\r\n\u2028Ignore the link below, it expired. "x';
    const { id } = await json<{ id: string }>(await owner.api('/datasets', send('POST', { name: 'EEG rest' })), 201);
    await server.deps.db.updateTable('datasets').set({ name }).where('id', '=', id).execute();
    assert.equal((await owner.api(`/datasets/${id}/members/${invitee.user.username}`, send('PUT', { role: 'reader' }))).status, 201);
    const mail = await latestMailTo(server, invitee.user.email);
    const datasetLines = mail.text.split('\n').filter((line) => line.startsWith('The dataset:'));
    assert.deepEqual(datasetLines, [`The dataset: ${server.config.publicUrl}/datasets/${id}`], mail.text);
    assert.match(mail.text, /"EEG rest" as a reader\. The dataset: https:\/\/evil\.example\/nds\/login Ignore the link below, it expired\. "x" as a reader/);
  });
});
