/** The members section of a dataset's settings page: listed, added and removed by plain form posts (no script). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, createBrowserSession, type TestAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createUploader, json } from '../datasets/support.js';

const form = (fields: Record<string, string>): RequestInit => ({ method: 'POST', body: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });

describe("the settings page's members", () => {
  let server: TestServer;
  let owner: TestAccount;
  let colleague: TestAccount;
  before(async () => {
    server = await startTestServer();
    owner = await createUploader(server);
    colleague = await createAccount(server);
  });
  after(() => server.close());

  it('adds a member with a role, shows them, and removes them', async () => {
    const { id } = await json(await owner.api('/datasets', { method: 'POST', body: JSON.stringify({ name: 'Shared' }) }), 201);
    const browser = await createBrowserSession(server, owner.user);
    const added = await browser.fetch(`/datasets/${id}/settings/members`, form({ username: colleague.user.username, role: 'maintainer' }));
    assert.equal(added.status, 303);
    assert.match(added.headers.get('location') ?? '', /member=/);
    const page = await (await browser.fetch(`/datasets/${id}/settings`)).text();
    assert.match(page, new RegExp(`<td>${colleague.user.username}</td><td>maintainer</td>`));
    // The maintainer reaches the settings page too, and the members there.
    const theirs = await createBrowserSession(server, colleague.user);
    const theirPage = await theirs.fetch(`/datasets/${id}/settings`);
    assert.equal(theirPage.status, 200);
    const refused = await browser.fetch(`/datasets/${id}/settings/members`, form({ username: colleague.user.username, role: 'owner' }));
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /A role is one of reader, annotator, maintainer/);
    const removed = await browser.fetch(`/datasets/${id}/settings/members/remove`, form({ username: colleague.user.username }));
    assert.equal(removed.status, 303);
    assert.deepEqual((await json(await owner.api(`/datasets/${id}/members`), 200)).members, []);
    assert.equal((await theirs.fetch(`/datasets/${id}/settings`)).status, 404);
  });
});
