/**
 * The first owner through the one-time setup link, in a real Chromium: the form creates the owner, verified
 * and signed in on that browser; the same link refuses a second use (410), a wrong token (403) and, on a
 * fresh service, a link older than an hour (410).
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('the one-time setup link in a browser', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let link: string;
  before(async () => {
    server = await startTestServer();
    browser = await sharedChromium();
    const opened = await server.deps.ownerSetup.open(server.deps.db);
    assert.ok(opened, 'a service without an owner gives a setup link');
    link = `${server.url}/setup?token=${opened.token}`;
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('creates the owner, verified and signed in on this browser', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const shown = await page.goto(link);
    assert.equal(shown?.status(), 200);
    await page.fill('input[name=username]', 'ada');
    await page.fill('input[name=email]', 'ada@example.org');
    const [answer] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    assert.equal(answer?.status(), 200);
    assert.match((await page.textContent('main')) ?? '', /Welcome, ada.*You are the owner/s);
    const user = await server.deps.db.selectFrom('users').selectAll().where('username', '=', 'ada').executeTakeFirstOrThrow();
    assert.deepEqual([user.role, user.status, user.kind], ['owner', 'approved', 'person']);
    // The session cookie signs this browser in: the account page shows the owner.
    await page.goto(`${server.url}/account`);
    assert.equal(new URL(page.url()).pathname, '/account');
    assert.match((await page.textContent('dl.facts')) ?? '', /ada.*owner/s);
    await context.close();
  });

  it('refuses the second use of the link with 410, in the browser and to a direct post', async () => {
    const page = await browser.newPage();
    const again = await page.goto(link);
    assert.equal(again?.status(), 410);
    assert.match((await page.textContent('main')) ?? '', /already used/);
    await page.close();
    const token = new URL(link).searchParams.get('token')!;
    const post = await fetch(`${server.url}/setup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url }, body: new URLSearchParams({ token, username: 'mallory', email: 'm@example.org' }) });
    assert.equal(post.status, 410);
    assert.equal(await server.deps.db.selectFrom('users').select('id').where('username', '=', 'mallory').executeTakeFirst(), undefined);
  });
});

describe('a setup link that is wrong or old', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.close());

  it('answers 403 for a wrong token, keeps the link usable after a form error, and 410 after an hour', async () => {
    const opened = (await server.deps.ownerSetup.open(server.deps.db))!;
    assert.equal((await fetch(`${server.url}/setup?token=not-the-token`)).status, 403);
    const bad = await fetch(`${server.url}/setup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: opened.token, username: 'X!', email: 'x@example.org' }) });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /<form[^>]+action="\/setup"/);
    assert.equal((await fetch(`${server.url}/setup?token=${opened.token}`)).status, 200, 'a form error leaves the link usable');
    server.clock.advance(61 * 60_000);
    const late = await fetch(`${server.url}/setup?token=${opened.token}`);
    assert.equal(late.status, 410);
    assert.match(await late.text(), /expired/);
  });
});
