/**
 * Requests reach people: asking for upload access or for publication mails the administrators (through the
 * real mailer, into the outbox), and `/admin` in a real chromium lists the open requests (a publication
 * request with the recordings its dataset could not convert), recent conversion failures and the accounts;
 * Approve and Deny (with a reason) decide them, and the requester gets a mail with the decision and the
 * reason. The administrator's home page names the open requests. To anyone else `/admin` answers as a path
 * no route takes. Screenshots go to $NDS_SCREENSHOTS when set.
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { SESSION_COOKIE, createSession } from '../../src/accounts/sessions.js';
import type { User } from '../../src/db/accounts-tables.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { ndsAs } from '../support/cli.js';
import { mailsTo, readOutbox } from '../support/outbox.js';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { EMPTY_EEG, TRUNCATED, convertRepoDataset, insertSearchableDataset, makeRepoWithFailures } from './workspace-support.js';

const FAILING_ID = 'nd000801';
const CLEAN_ID = 'nd000802';
const shots = process.env.NDS_SCREENSHOTS;

describe('requests reach people: mails and the administrators\' page in chromium', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let root: TestAccount;
  let helper: TestAccount;
  let bea: TestAccount;
  let cai: TestAccount;
  let dan: TestAccount;
  let repo: string;
  let failingRequest: number;
  let cleanRequest: number;

  async function contextOf(user: User | undefined): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
    if (user) {
      const { token } = await createSession(server.deps.db, user.id, server.clock.now());
      await context.addCookies([{ name: SESSION_COOKIE, value: token, url: server.url }]);
    }
    return context;
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    if (!shots) return;
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, name), fullPage: true });
  }

  const subjects = async (address: string) => (await mailsTo(server.dataDir, address)).map((m) => m.subject);
  const userRow = (id: number) => server.deps.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  before(async () => {
    server = await startTestServer();
    root = await createAccount(server, { username: 'root', role: 'owner' });
    helper = await createAccount(server, { username: 'helper', role: 'admin' });
    bea = await createAccount(server, { username: 'bea', status: 'verified' });
    cai = await createAccount(server, { username: 'cai', status: 'verified' });
    dan = await createAccount(server, { username: 'dan' });
    repo = makeRepoWithFailures();
    await convertRepoDataset(server, root, { id: FAILING_ID, name: 'Dan grip study', ownerId: dan.user.id, repo, visibility: 'private' });
    await insertSearchableDataset(server, { id: CLEAN_ID, name: 'Dan rest study', ownerId: dan.user.id, visibility: 'private', description: 'Rest', facts: {} });
    const complete = { description: 'Grip and rest recordings.', license: 'CC0-1.0', authors: ['Dan Example'] };
    await server.deps.db.updateTable('datasets').set(complete).where('id', 'in', [FAILING_ID, CLEAN_ID]).execute();
    browser = await sharedChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it('mails every administrator when someone asks for upload access, once', async () => {
    for (const who of [bea, cai]) {
      const res = await who.api('/users/me/upload-access', { method: 'POST' });
      assert.equal(res.status, 200, await res.text());
    }
    // Asking again records nothing new and mails nobody.
    assert.equal((await bea.api('/users/me/upload-access', { method: 'POST' })).status, 200);
    for (const admin of [root, helper]) {
      assert.deepEqual(await subjects(admin.user.email), ['nds: bea asks for upload access', 'nds: cai asks for upload access']);
    }
    const mail = (await mailsTo(server.dataDir, root.user.email))[0]!;
    assert.match(mail.text, /bea \(bea@example\.org\) asks for upload access/);
    assert.ok(mail.text.includes(`${server.url}/admin`), mail.text);
    assert.deepEqual(await subjects(dan.user.email), []);
  });

  it('mails the administrators of a publication request with the recordings that could not be converted, and shows them in the CLI', async () => {
    const run = await ndsAs(server, dan.key, ['datasets', 'publish', 'request', FAILING_ID]).done;
    assert.equal(run.code, 0, run.stderr);
    const [, id] = /^request (\d+) for nd000801 v1\.0\.0: pending$/m.exec(run.stdout)!;
    failingRequest = Number(id);
    assert.match(run.stderr, new RegExp(`warning: request ${id} \\(${FAILING_ID}\\): 2 recordings could not be converted:\\n  ${TRUNCATED}: corrupt_or_truncated: .+\\n  ${EMPTY_EEG}: \\w+: .+`));
    const clean = await dan.api(`/datasets/${CLEAN_ID}/publish/request`, { method: 'POST', body: JSON.stringify({ message: 'Ready for review.' }) });
    assert.equal(clean.status, 201);
    const cleanBody = (await clean.json()) as { id: number; failed_recordings: unknown[] };
    cleanRequest = cleanBody.id;
    assert.deepEqual(cleanBody.failed_recordings, []);

    const mail = (await mailsTo(server.dataDir, helper.user.email)).find((m) => m.subject === `nds: dan asks to publish ${FAILING_ID} v1.0.0`);
    assert.ok(mail, JSON.stringify(await subjects(helper.user.email)));
    assert.match(mail.text, /Warning: 2 recordings of this dataset could not be converted:/);
    assert.ok(mail.text.includes(`  ${TRUNCATED}: corrupt_or_truncated:`), mail.text);
    assert.ok(mail.text.includes(`npx nds admin publish approve ${failingRequest}`));

    const listed = await ndsAs(server, root.key, ['admin', 'publish', 'list', '--status', 'pending']).done;
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^ID\s+DATASET_ID\s+DATASET_NAME\s+VERSION\s+STATUS\s+REQUESTED_BY\s+REQUESTED_AT\s+FAILED\s+DOI$/m);
    assert.match(listed.stdout, new RegExp(`^${failingRequest}\\s+${FAILING_ID}\\s+Dan grip study\\s+1\\.0\\.0\\s+pending\\s+dan\\s+\\S+\\s+2\\s+-$`, 'm'));
    assert.ok(listed.stdout.includes(`  ${TRUNCATED}: corrupt_or_truncated:`), listed.stdout);
    const status = await ndsAs(server, dan.key, ['datasets', 'publish', 'status', FAILING_ID]).done;
    assert.ok(status.stdout.includes(`  ${EMPTY_EEG}: `), status.stdout);
  });

  it("names the open requests under \"Needs your action\" on an administrator's home page, and nobody else's", async () => {
    const context = await contextOf(root.user);
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    const needs = page.locator('#admin-requests');
    assert.match(await needs.innerText(), /Needs your action\n/);
    assert.match(await needs.innerText(), /2 requests for upload access: bea, cai/);
    assert.match(await needs.innerText(), new RegExp(`2 publication requests: ${FAILING_ID} v1\\.0\\.0 \\(dan\\), ${CLEAN_ID} v1\\.0\\.0 \\(dan\\)`));
    await screenshot(page, 'admin-home.png');
    await needs.getByRole('link', { name: /administration page/ }).click();
    await page.waitForURL(`${server.url}/admin`);
    await context.close();
    const member = await contextOf(dan.user);
    const theirs = await member.newPage();
    await theirs.goto(`${server.url}/`);
    assert.equal(await theirs.locator('#admin-requests').count(), 0);
    await member.close();
  });

  it('approves and denies (with a reason) on /admin; each requester gets a mail with the decision', async () => {
    const context = await contextOf(root.user);
    const page = await context.newPage();
    await page.goto(`${server.url}/admin`);
    assert.equal(await page.title(), 'Administration · nds');
    assert.match(await page.locator('#upload-access h2').innerText(), /Upload-access requests \(2\)/);
    const failing = page.locator(`[data-request="${failingRequest}"]`);
    assert.match(await failing.innerText(), /2 recordings of this dataset could not be converted:/);
    assert.ok((await failing.innerText()).includes(TRUNCATED));
    assert.match(await page.locator(`[data-request="${cleanRequest}"]`).innerText(), /“Ready for review\.”/);
    assert.match(await page.locator('#conversion-failures').innerText(), new RegExp(`Dan grip study[\\s\\S]*ready, 2 failed[\\s\\S]*${TRUNCATED.replace(/[.]/g, '\\.')}`));
    assert.match(await page.locator('#users').innerText(), /Accounts \(5\)[\s\S]*bea[\s\S]*verified/);
    await screenshot(page, 'admin-page.png');

    // Approve bea.
    await page.locator('[data-username="bea"]').getByRole('button', { name: 'Approve bea' }).click();
    await page.waitForURL(/\/admin\?done=access-approved/);
    assert.match(await page.locator('.notice.ok').innerText(), /Upload access is granted; the requester is told by mail\./);
    assert.equal(await page.locator('[data-username="bea"]').count(), 0);
    assert.equal((await userRow(bea.user.id)).status, 'approved');
    const granted = (await mailsTo(server.dataDir, bea.user.email)).at(-1)!;
    assert.equal(granted.subject, 'nds: your upload access is granted');

    // Deny cai: the form asks for a reason, which cai reads.
    const caiRow = page.locator('[data-username="cai"]');
    await caiRow.locator('summary', { hasText: 'Deny' }).click();
    await caiRow.locator('textarea[name=reason]').fill('Please use your institutional address.');
    await screenshot(page, 'admin-page-deny.png');
    await caiRow.getByRole('button', { name: 'Deny cai' }).click();
    await page.waitForURL(/\/admin\?done=access-denied/);
    assert.match(await page.locator('#upload-access').innerText(), /No open request\./);
    const caiNow = await userRow(cai.user.id);
    assert.deepEqual([caiNow.status, caiNow.upload_access_requested_at], ['verified', null]);
    const denied = (await mailsTo(server.dataDir, cai.user.email)).at(-1)!;
    assert.equal(denied.subject, 'nds: your request for upload access was denied');
    assert.match(denied.text, /for this reason:\n\n {4}Please use your institutional address\./);

    // Approve the request with failures: the dataset is public, dan gets the DOI.
    await failing.getByRole('button', { name: `Approve request ${failingRequest}` }).click();
    await page.waitForURL(/\/admin\?done=publication-approved/);
    const published = (await mailsTo(server.dataDir, dan.user.email)).find((m) => m.subject === `nds: ${FAILING_ID} v1.0.0 is published`);
    assert.ok(published);
    assert.match(published.text, /Its DOI: 10\.5072\//);
    const dataset = await server.deps.db.selectFrom('datasets').select(['visibility', 'publication_status']).where('id', '=', FAILING_ID).executeTakeFirstOrThrow();
    assert.deepEqual(dataset, { visibility: 'public', publication_status: 'published' });

    // Deny the other one with a reason.
    const clean = page.locator(`[data-request="${cleanRequest}"]`);
    await clean.locator('summary', { hasText: 'Deny' }).click();
    await clean.locator('textarea[name=reason]').fill('The description is one word; say what was recorded.');
    await clean.getByRole('button', { name: `Deny request ${cleanRequest}` }).click();
    await page.waitForURL(/\/admin\?done=publication-denied/);
    assert.match(await page.locator('#publication').innerText(), /Publication requests \(0\)\s+No open request\./);
    const refused = (await mailsTo(server.dataDir, dan.user.email)).find((m) => m.subject === `nds: publication of ${CLEAN_ID} v1.0.0 was denied`);
    assert.ok(refused);
    assert.match(refused.text, /The description is one word; say what was recorded\./);
    await screenshot(page, 'admin-page-decided.png');
    await context.close();
  });

  it('refuses a denial without a reason, and a post from another origin', async () => {
    await bea.api('/users/me/upload-access', { method: 'POST' }); // bea is approved: no open request is made
    const res = await cai.api('/users/me/upload-access', { method: 'POST' });
    assert.equal(res.status, 200);
    const { token } = await createSession(server.deps.db, root.user.id, server.clock.now());
    const post = (target: string, body: string, origin = server.url) =>
      fetch(`${server.url}${target}`, { method: 'POST', redirect: 'manual', headers: { cookie: `${SESSION_COOKIE}=${token}`, origin, 'content-type': 'application/x-www-form-urlencoded' }, body });
    const blank = await post('/admin/requests/upload-access/cai/deny', 'reason=%20%20');
    assert.equal(blank.status, 409);
    assert.match(await blank.text(), /A denial needs a reason: the requester reads it\./);
    const foreign = await post('/admin/requests/upload-access/cai/approve', '', 'https://evil.example');
    assert.equal(foreign.status, 403);
    assert.notEqual((await userRow(cai.user.id)).upload_access_requested_at, null);
    // The CLI denies too.
    const cli = await ndsAs(server, helper.key, ['admin', 'users', 'deny', 'cai', '--reason', 'Not now.']).done;
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^denied the upload-access request of cai \(status verified\)$/m);
    assert.match((await mailsTo(server.dataDir, cai.user.email)).at(-1)!.text, /Not now\./);
    const again = await ndsAs(server, helper.key, ['admin', 'users', 'deny', 'cai', '--reason', 'Twice.']).done;
    assert.equal(again.code, 1);
    assert.match(again.stderr, /cai has no open request for upload access\. \(conflict\)/);
  });

  it('answers anyone but a signed-in administrator exactly as a path no route takes, and changes nothing', async () => {
    const unknown = async (method: string, target: string, init: RequestInit = {}) => {
      const res = await fetch(`${server.url}${target}`, { method, redirect: 'manual', ...init });
      return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
    };
    const expected = (method: string, target: string) => ({ status: 404, type: 'application/json', body: JSON.stringify({ error: 'not_found', message: `No route for ${method} ${target}.`, details: [] }) });
    // The form of an unknown path, for comparison.
    assert.deepEqual(await unknown('GET', '/no-such-page'), expected('GET', '/no-such-page'));
    const member = await createSession(server.deps.db, dan.user.id, server.clock.now());
    const memberCookie = { cookie: `${SESSION_COOKIE}=${member.token}`, origin: server.url };
    const mailsBefore = (await readOutbox(server.dataDir)).length;
    const callers: Array<Record<string, string>> = [{}, memberCookie, { authorization: `Bearer ${root.key}` }];
    for (const headers of callers) {
      assert.deepEqual(await unknown('GET', '/admin', { headers }), expected('GET', '/admin'));
      const target = `/admin/requests/publication/${cleanRequest}/approve`;
      assert.deepEqual(await unknown('POST', target, { headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: '' }), expected('POST', target));
      // Malformed input is not read before the caller is known: still the unknown path's answer.
      assert.deepEqual(await unknown('POST', target, { headers: { ...headers, 'content-type': 'application/json' }, body: '{' }), expected('POST', target));
      assert.deepEqual(await unknown('GET', '/admin?done=%00'), expected('GET', '/admin'));
    }
    const browserPage = await (await contextOf(dan.user)).newPage();
    const answer = await browserPage.goto(`${server.url}/admin`);
    assert.equal(answer!.status(), 404);
    assert.equal(await answer!.text(), expected('GET', '/admin').body);
    await browserPage.context().close();
    assert.equal((await readOutbox(server.dataDir)).length, mailsBefore);
  });
});
