/**
 * Who hears of a publication request (docs/search-and-publication.md: "The owner gets a mail either way"): a
 * maintainer may ask to publish the owner's dataset (decision 0028), so the owner is told of the request and of
 * the decision, and each person gets one mail of a decision even when they are both owner and asker. A takedown
 * (an administrator makes the dataset private) is told to the owner too, with the administrator's reason, and to
 * whoever asked for the pending request it closed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { mailsTo } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { addVersion } from '../support/versions.js';

describe('publication mails', () => {
  let server: TestServer;
  let owner: TestAccount;
  let maintainer: TestAccount;
  let admin: TestAccount;
  before(async () => {
    server = await startTestServer();
    admin = await createAccount(server, { role: 'admin' });
    owner = await createAccount(server);
    maintainer = await createAccount(server);
    await server.deps.db.updateTable('users').set({ sandbox_completed_at: new Date() }).where('id', '=', owner.user.id).execute();
  });
  after(() => server.close());

  async function ownersDataset(name: string, withMaintainer: boolean): Promise<string> {
    const created = await owner.api('/datasets', { method: 'POST', body: JSON.stringify({ name, authors: ['A. Owner'], license: 'CC0-1.0', description: 'Pilot recordings.' }) });
    assert.equal(created.status, 201);
    const id = (await created.json()).id as string;
    await addVersion(server, owner, id, '0.1.0');
    if (withMaintainer) {
      const added = await owner.api(`/datasets/${id}/members/${maintainer.user.username}`, { method: 'PUT', body: JSON.stringify({ role: 'maintainer' }) });
      assert.ok(added.status < 300, await added.clone().text());
    }
    return id;
  }

  const about = async (who: TestAccount, id: string) => (await mailsTo(server.dataDir, who.user.email)).filter((m) => m.subject.includes(id) && /publish|publication/.test(m.subject)).map((m) => m.subject);

  it("tells the owner of a maintainer's request, and the owner and the maintainer of its approval", async () => {
    const id = await ownersDataset('Private pilot', true);
    const request = await maintainer.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    assert.equal(request.status, 201, await request.clone().text());
    assert.deepEqual(await about(owner, id), [`nds: ${maintainer.user.username} asks to publish your dataset ${id} v0.1.0`]);
    const approved = await admin.api(`/admin/publish/${(await request.json()).id}/approve`, { method: 'POST' });
    assert.equal(approved.status, 200);
    assert.deepEqual((await about(owner, id)).slice(1), [`nds: ${id} v0.1.0 is published`]);
    assert.deepEqual(await about(maintainer, id), [`nds: ${id} v0.1.0 is published`]);
  });

  it("tells the owner and the maintainer of a denial of the maintainer's request", async () => {
    const id = await ownersDataset('Second pilot', true);
    const request = await maintainer.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    const denied = await admin.api(`/admin/publish/${(await request.json()).id}/deny`, { method: 'POST', body: JSON.stringify({ reason: 'Add a README.' }) });
    assert.equal(denied.status, 200);
    const subject = `nds: publication of ${id} v0.1.0 was denied`;
    assert.deepEqual((await about(owner, id)).slice(1), [subject]);
    assert.deepEqual(await about(maintainer, id), [subject]);
    const [toOwner] = (await mailsTo(server.dataDir, owner.user.email)).filter((m) => m.subject === subject);
    assert.match(toOwner.text, new RegExp(`by ${maintainer.user.username}\\).*Add a README`, 's'));
  });

  it('sends an owner who asked one mail of the decision, and none of their own request', async () => {
    const id = await ownersDataset('Own pilot', false);
    const request = await owner.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    const approved = await admin.api(`/admin/publish/${(await request.json()).id}/approve`, { method: 'POST' });
    assert.equal(approved.status, 200);
    assert.deepEqual(await about(owner, id), [`nds: ${id} v0.1.0 is published`]);
  });

  async function publish(id: string): Promise<void> {
    const request = await owner.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    assert.equal(request.status, 201, await request.clone().text());
    assert.equal((await admin.api(`/admin/publish/${(await request.json()).id}/approve`, { method: 'POST' })).status, 200);
  }

  const takedownMails = async (who: TestAccount, id: string) => (await mailsTo(server.dataDir, who.user.email)).filter((m) => m.subject.includes(id) && /private|closed/.test(m.subject));

  it("tells the owner of a takedown, with the administrator's reason", async () => {
    const id = await ownersDataset('Published pilot', false);
    await publish(id);
    const reason = 'The consent forms do not cover public sharing.\nAsk the ethics board, then request again.';
    const takedown = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private', visibility_reason: reason }) });
    assert.equal(takedown.status, 200, await takedown.clone().text());
    const mails = await takedownMails(owner, id);
    assert.deepEqual(mails.map((m) => m.subject), [`nds: an administrator made ${id} private`]);
    assert.match(mails[0].text, new RegExp(`made your dataset ${id} "Published pilot" private`));
    assert.match(mails[0].text, /Their reason:\n\n {4}The consent forms do not cover public sharing\.\n {4}Ask the ethics board/);
    assert.doesNotMatch(mails[0].text, /was pending/, 'no request was pending');
    assert.deepEqual(await takedownMails(admin, id), [], 'the administrator who did it is not told');
  });

  it('tells the owner and the maintainer whose pending request a takedown closed', async () => {
    const id = await ownersDataset('Growing pilot', true);
    await publish(id);
    await addVersion(server, owner, id, '0.2.0');
    const request = await maintainer.api(`/datasets/${id}/publish/request`, { method: 'POST' });
    assert.equal(request.status, 201, await request.clone().text());
    const requestId = (await request.json()).id as number;
    const takedown = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ visibility: 'private' }) });
    assert.equal(takedown.status, 200, await takedown.clone().text());

    const [toOwner, ...moreToOwner] = await takedownMails(owner, id);
    assert.equal(toOwner?.subject, `nds: an administrator made ${id} private`);
    assert.deepEqual(moreToOwner, []);
    assert.match(toOwner.text, new RegExp(`Request ${requestId} \\(by ${maintainer.user.username}\\) to publish version 0\\.2\\.0 was pending; it is closed`));
    assert.doesNotMatch(toOwner.text, /Their reason/, 'no reason was given');
    const toMaintainer = await takedownMails(maintainer, id);
    assert.deepEqual(toMaintainer.map((m) => m.subject), [`nds: your request to publish ${id} v0.2.0 was closed`]);
    assert.match(toMaintainer[0].text, new RegExp(`private while your request ${requestId} to publish version 0\\.2\\.0 was pending`));
  });

  it('refuses a takedown reason without a takedown, changing nothing', async () => {
    const id = await ownersDataset('Quiet pilot', false);
    const res = await admin.api(`/datasets/${id}`, { method: 'PATCH', body: JSON.stringify({ name: 'Renamed pilot', visibility_reason: 'Because.' }) });
    assert.equal(res.status, 400, await res.clone().text());
    assert.equal((await res.json()).error, 'validation_failed');
    const row = await server.deps.db.selectFrom('datasets').select('name').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.name, 'Quiet pilot');
    assert.deepEqual(await takedownMails(owner, id), []);
  });
});
