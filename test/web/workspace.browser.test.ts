/**
 * The researcher's workspace in a real chromium: the home page searches (words and facets) and pages, at
 * desktop and phone width; a signed-in owner sees their datasets with what needs their action, opens their
 * private dataset and its viewer draws traces through a read grant (the same gateway URL answers 404 without
 * it, with another dataset's grant, or once it expired), renewing the grant before it runs out; a failed
 * recording's reason is on its page; the settings page saves metadata and requests publication, and an
 * administrator makes a dataset private there, with a reason its owner gets by mail; /account requests upload
 * access. Screenshots go to $NDS_SCREENSHOTS when set (docs/images/ holds the chosen ones).
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { SESSION_COOKIE, createSession } from '../../src/accounts/sessions.js';
import { READ_GRANT_SECONDS } from '../../src/datasets/read-grant.js';
import { refreshSearchFields } from '../../src/datasets/search-fields.js';
import type { User } from '../../src/db/accounts-tables.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { fixturesDir } from '../formats/support/fixtures.js';
import { mailsTo } from '../support/outbox.js';
import { rawRequest } from '../gateway/support.js';
import { publishDataset } from './viewer-support.js';
import { convertRepoDataset, insertSearchableDataset, makeRepoWithFailures } from './workspace-support.js';

const PRIVATE_ID = 'nd000720';
const OTHER_PRIVATE_ID = 'nd000721';
const FAILURES_ID = 'nd000722';
const RECORDING = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';
const shots = process.env.NDS_SCREENSHOTS;

/** 13 public datasets of another lab: 10 on the first page, 3 on the second. */
const PUBLIC = Array.from({ length: 13 }, (_, i) => {
  const emg = i % 4 === 3;
  return {
    id: `nd0006${String(i).padStart(2, '0')}`,
    name: emg ? `Grip force EMG ${i}` : i % 2 ? `Resting state EEG cohort ${i}` : `Sleep EEG night ${i}`,
    description: emg ? 'Forearm surface EMG during a grip task at three force levels.' : i % 2 ? 'Eyes-closed resting state, 5 minutes per subject.' : 'Overnight polysomnography with scored sleep stages.',
    facts: emg
      ? { modalities: ['emg'], tasks: ['grip'], sampling_rates: [2000], channel_counts: [8], n_subjects: 12, n_recordings: 36, duration_s: 36 * 300 }
      : { modalities: ['eeg'], tasks: [i % 2 ? 'rest' : 'sleep'], sampling_rates: [i % 2 ? 500 : 256], channel_counts: [i % 2 ? 64 : 32], n_subjects: 10 + i, n_recordings: 10 + i, duration_s: (10 + i) * (i % 2 ? 300 : 28_800) },
    doi: i === 12 ? '10.5281/zenodo.1234567' : undefined,
  };
});

describe('the researcher\'s workspace in chromium', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let owner: TestAccount;
  let admin: TestAccount;
  let lab: TestAccount;
  let repo: string;

  async function contextOf(user: User | undefined, viewport = { width: 1280, height: 900 }, javaScriptEnabled = true): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport, deviceScaleFactor: 1, javaScriptEnabled });
    if (user) {
      const { token } = await createSession(server.deps.db, user.id, server.clock.now());
      await context.addCookies([{ name: SESSION_COOKIE, value: token, url: server.url }]);
    }
    return context;
  }

  async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
    if (!shots) return;
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, name), fullPage });
  }

  const cardNames = (page: Page) => page.locator('.dataset-card h3').allTextContents();

  before(async () => {
    server = await startTestServer();
    owner = await createAccount(server, { username: 'ada' });
    lab = await createAccount(server, { username: 'sleep-lab' });
    admin = await createAccount(server, { role: 'admin' });
    for (const d of PUBLIC) await insertSearchableDataset(server, { ...d, ownerId: lab.user.id });
    await publishDataset(server, { id: PRIVATE_ID, ownerId: owner.user.id, name: 'Ada private pilot', visibility: 'private', recordings: [{ file: path.join(fixturesDir, 'mne-python/brainvision/test.vhdr'), zarr: RECORDING }] });
    await publishDataset(server, { id: OTHER_PRIVATE_ID, ownerId: owner.user.id, name: 'Ada second study', visibility: 'private', recordings: [{ file: path.join(fixturesDir, 'mne-python/edf/test.edf'), zarr: RECORDING }] });
    for (const id of [PRIVATE_ID, OTHER_PRIVATE_ID]) await refreshSearchFields(server.deps, id);
    await server.deps.db.updateTable('datasets').set({ latest_version: '1.0.0' }).where('id', '=', PRIVATE_ID).execute();
    repo = makeRepoWithFailures();
    await convertRepoDataset(server, admin, { id: FAILURES_ID, name: 'Ada broken upload', ownerId: owner.user.id, repo, visibility: 'private' });
    browser = await sharedChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it('searches by words and facets and pages through the results, without a session', async () => {
    const context = await contextOf(undefined);
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    assert.equal(await page.locator('#results-heading').textContent(), '13 datasets');
    assert.equal((await cardNames(page)).length, 10);
    assert.ok(!(await page.content()).includes('Ada private pilot'), 'no private dataset of anyone for a visitor');
    const newest = page.locator('.dataset-card').first();
    assert.equal(await newest.locator('h3').innerText(), PUBLIC[12]!.name);
    assert.match(await newest.innerText(), /10\.5281\/zenodo\.1234567/);
    assert.match(await newest.innerText(), /Signal\s+176 h/, '22 recordings of 8 hours');
    await screenshot(page, 'home-desktop.png');

    await page.getByRole('link', { name: 'Next →' }).click();
    await page.waitForURL(/page=2/);
    assert.equal((await cardNames(page)).length, 3);
    assert.match((await page.locator('nav.paging').textContent())!, /Page 2 of 2/);
    await page.getByRole('link', { name: '← Previous' }).click();
    await page.waitForURL((url) => !url.search.includes('page='));
    assert.equal((await cardNames(page)).length, 10);

    await page.locator('input[name=q]').fill('grip');
    await page.locator('input[name=q]').press('Enter');
    await page.waitForURL(/q=grip/);
    const grip = PUBLIC.filter((d) => d.name.startsWith('Grip')).map((d) => d.name).sort();
    assert.deepEqual((await cardNames(page)).sort(), grip);
    assert.equal(await page.locator('#results-heading').textContent(), `${grip.length} datasets found`);

    // The facet lists count what the current search found: start from all datasets.
    await page.goto(`${server.url}/`);
    await page.locator('details.facets summary').click();
    await page.locator('select[name=modality]').selectOption('eeg');
    await page.locator('input[name=channels]').fill('64');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/channels=64/);
    const rest64 = PUBLIC.filter((d) => d.facts.modalities[0] === 'eeg' && d.facts.channel_counts[0] === 64).map((d) => d.name).sort();
    assert.deepEqual((await cardNames(page)).sort(), rest64);
    assert.equal(await page.locator('select[name=modality]').inputValue(), 'eeg', 'the form keeps what was asked');

    await page.goto(`${server.url}/?sampling_rate=256&task=sleep`);
    const sleep = PUBLIC.filter((d) => d.facts.tasks[0] === 'sleep').map((d) => d.name).sort();
    assert.deepEqual((await cardNames(page)).sort(), sleep);
    await page.goto(`${server.url}/?page=7`);
    await page.getByRole('link', { name: 'back to the first page' }).click();
    assert.equal((await cardNames(page)).length, 10);
    await page.goto(`${server.url}/?q=nothing-matches-this`);
    assert.match(await page.locator('#results').innerText(), /No dataset matches/);
    await page.goto(`${server.url}/?channels=many`);
    assert.match(await page.locator('.notice.error').innerText(), /Channels must be a whole number/);
    await context.close();
  });

  it('searches, filters and pages with JavaScript turned off', async () => {
    const context = await contextOf(undefined, undefined, false);
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    await page.locator('details.facets summary').click();
    await page.locator('select[name=modality]').selectOption('emg');
    await page.locator('input[name=q]').fill('force');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/modality=emg/);
    assert.deepEqual((await cardNames(page)).sort(), PUBLIC.filter((d) => d.name.startsWith('Grip')).map((d) => d.name).sort());
    await page.goto(`${server.url}/`);
    await page.getByRole('link', { name: 'Next →' }).click();
    await page.waitForURL(/page=2/);
    assert.equal((await cardNames(page)).length, 3);
    await context.close();
  });

  it('fits a phone: no sideways scrolling, cards in one column', async () => {
    for (const user of [undefined, owner.user]) {
      const context = await contextOf(user, { width: 390, height: 844 });
      const page = await context.newPage();
      await page.goto(`${server.url}/`);
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
      assert.ok(widths.scroll <= widths.inner, `page is ${widths.scroll} px wide on a ${widths.inner} px screen`);
      const boxes = await page.locator('.dataset-card').evaluateAll((cards) => cards.slice(0, 2).map((c) => c.getBoundingClientRect().left));
      assert.equal(boxes[0], boxes[1], 'one column');
      await screenshot(page, user ? 'home-phone-signed-in.png' : 'home-phone.png', false);
      await context.close();
    }
  });

  it('shows a signed-in owner their datasets, their state and what needs their action', async () => {
    const context = await contextOf(owner.user);
    const page = await context.newPage();
    await page.goto(`${server.url}/`);
    const mine = page.locator('#my-datasets');
    const text = await mine.innerText();
    for (const name of ['Ada private pilot', 'Ada second study', 'Ada broken upload']) assert.ok(text.includes(name), name);
    const broken = await mine.locator('tr', { hasText: 'Ada broken upload' }).innerText();
    assert.match(broken, /private · Zarr ready, 2 failed/);
    assert.match(broken, /2 recordings could not be converted/);
    assert.match(await mine.locator('tr', { hasText: 'Ada private pilot' }).innerText(), /request publication when it is ready/);
    assert.match(await mine.locator('tr', { hasText: 'Ada second study' }).innerText(), /Empty: upload a BIDS folder/);
    assert.equal(await page.locator('#results-heading').textContent(), '16 datasets', 'search includes her own private ones');
    await screenshot(page, 'home-signed-in.png');
    await context.close();
  });

  it("draws the owner's private recording through a read grant, which the gateway alone refuses", async () => {
    const context = await contextOf(owner.user);
    const page = await context.newPage();
    await page.clock.install();
    const grantsSent = new Map<string, string>();
    page.on('request', (r) => {
      const auth = r.headers()['authorization'];
      if (r.url().includes('/zarrproxy/') && auth) grantsSent.set(r.url(), auth);
    });
    const chunkAnswers: number[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/zarrproxy/') && /\/c\//.test(r.url())) chunkAnswers.push(r.status());
    });
    await page.goto(`${server.url}/datasets/${PRIVATE_ID}`);
    await page.waitForFunction(() => window.ndsViewer?.tracesReady === true, undefined, { timeout: 20_000 });
    assert.match(await page.locator('.notice.private').innerText(), /Private/);
    assert.ok(chunkAnswers.length > 0 && chunkAnswers.every((s) => s === 200), `chunks read: ${chunkAnswers.join(', ')}`);
    const drawn = await page.locator('#nds-viewer canvas.viewer-traces').evaluate((canvas: HTMLCanvasElement) => {
      const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
      let dark = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i]! < 160 && data[i + 3]! > 0) dark++;
      return dark;
    });
    assert.ok(drawn > 1000, `traces drawn (${drawn} dark pixels)`);
    const chunkUrl = [...grantsSent.keys()].find((u) => /\/c\//.test(u))!;
    assert.ok(chunkUrl, 'chunks were fetched with a grant');
    const grant = grantsSent.get(chunkUrl)!;
    assert.match(grant, /^Bearer ndsg\./);
    await screenshot(page, 'private-preview.png');

    const target = new URL(chunkUrl).pathname;
    const unknown = await rawRequest(server.url, target.replace(PRIVATE_ID, 'nd000799'));
    const withGrant = await rawRequest(server.url, target, { headers: { authorization: grant } });
    assert.equal(withGrant.status, 200);
    assert.equal(withGrant.headers['cache-control'], 'private, no-store');
    const without = await rawRequest(server.url, target);
    assert.equal(without.status, 404);
    assert.deepEqual(JSON.parse(without.body.toString()), JSON.parse(unknown.body.toString()), 'as for an unknown dataset');
    const other = (await (await owner.api(`/datasets/${OTHER_PRIVATE_ID}/read-grant`, { method: 'POST' })).json()) as { grant: string };
    assert.equal((await rawRequest(server.url, target, { headers: { authorization: `Bearer ${other.grant}` } })).status, 404, "another dataset's grant");

    // Ten minutes later (server and browser clocks both), the page's grant has expired at the gateway...
    server.clock.advance(READ_GRANT_SECONDS * 1000);
    await page.clock.fastForward(READ_GRANT_SECONDS * 1000);
    assert.equal((await rawRequest(server.url, target, { headers: { authorization: grant } })).status, 404, 'an expired grant');
    // ...and the viewer, which renewed its grant before it ran out, still reads new chunks.
    const before = chunkAnswers.length;
    const rendersBefore = await page.evaluate(() => window.ndsViewer!.renders);
    await page.locator('#nds-viewer').focus();
    for (let i = 0; i < 4; i++) await page.keyboard.press('+');
    await page.keyboard.press('End');
    await page.waitForFunction((n) => window.ndsViewer?.tracesReady === true && window.ndsViewer.renders > n, rendersBefore, { timeout: 20_000 });
    const renewed = [...grantsSent.values()].filter((g) => g !== grant);
    assert.ok(renewed.length > 0, 'requests carried a renewed grant');
    assert.ok(chunkAnswers.length > before, 'new chunks were read after the first grant expired');
    assert.ok(chunkAnswers.slice(before).every((s) => s === 200), `chunks after renewal: ${chunkAnswers.slice(before).join(', ')}`);
    await context.close();

    const visitor = await contextOf(undefined);
    const anonymous = await visitor.newPage();
    const answer = await anonymous.goto(`${server.url}/datasets/${PRIVATE_ID}`);
    assert.equal(answer?.status(), 404);
    await visitor.close();
  });

  it("shows a failed recording's reason on its dataset page", async () => {
    const context = await contextOf(owner.user);
    const page = await context.newPage();
    await page.goto(`${server.url}/datasets/${FAILURES_ID}`);
    const failures = page.locator('#conversion-failures');
    assert.equal(await failures.locator('h2').innerText(), '2 recordings could not be converted');
    const text = await failures.innerText();
    assert.match(text, /sub-02\/eeg\/sub-02_task-rest_eeg\.edf\s+corrupt_or_truncated\s+sub-02_task-rest_eeg\.edf is truncated: the header announces 6 data records/);
    assert.match(text, /sub-03\/eeg\/sub-03_task-rest_eeg\.vhdr\s+empty_recording\s+The data file sub-03_task-rest_eeg\.eeg is empty \(0 bytes\)\./);
    assert.match(await page.locator('dl.facts').innerText(), /Zarr copy\s+ready, 2 failed/);
    await screenshot(page, 'conversion-failures.png');
    await context.close();
  });

  it('saves metadata and requests publication on the settings page', async () => {
    const context = await contextOf(owner.user);
    const page = await context.newPage();
    await page.goto(`${server.url}/datasets/${PRIVATE_ID}/settings`);
    await page.locator('textarea[name=description]').fill('Pilot recordings of the resting-state protocol.');
    await page.locator('textarea[name=authors]').fill('Ada Lovelace\nCharles Babbage');
    await page.locator('input[name=license]').fill('CC-BY-4.0');
    await page.locator('input[name=keywords]').fill('pilot, resting state');
    await page.getByRole('button', { name: 'Save metadata' }).click();
    await page.waitForURL(/saved=1/);
    assert.match(await page.locator('.notice.ok').innerText(), /saved/);
    const row = await server.deps.db.selectFrom('datasets').selectAll().where('id', '=', PRIVATE_ID).executeTakeFirstOrThrow();
    assert.equal(row.description, 'Pilot recordings of the resting-state protocol.');
    assert.deepEqual(row.authors, ['Ada Lovelace', 'Charles Babbage']);
    assert.deepEqual(row.keywords, ['pilot', 'resting state']);
    assert.equal(row.license, 'CC-BY-4.0');
    await screenshot(page, 'settings.png');

    await page.locator('input[name=name]').fill('');
    await page.locator('input[name=name]').evaluate((el: HTMLInputElement) => el.removeAttribute('required'));
    await page.getByRole('button', { name: 'Save metadata' }).click();
    assert.match(await page.locator('.notice.error').innerText(), /Name: give the dataset a name/);
    assert.equal((await server.deps.db.selectFrom('datasets').select('name').where('id', '=', PRIVATE_ID).executeTakeFirstOrThrow()).name, 'Ada private pilot', 'nothing saved');

    await page.goto(`${server.url}/datasets/${PRIVATE_ID}/settings`);
    await page.locator('textarea[name=message]').fill('Ready for review.');
    await page.getByRole('button', { name: /Request publication/ }).click();
    await page.waitForURL(/requested=1/);
    assert.match(await page.locator('#publication').innerText(), /was requested/);
    const status = (await (await owner.api(`/datasets/${PRIVATE_ID}/publish/status`)).json()) as { publication_status: string };
    assert.equal(status.publication_status, 'pending');
    await context.close();

    const stranger = await createAccount(server);
    const strangerContext = await contextOf(stranger.user);
    const refused = await (await strangerContext.newPage()).goto(`${server.url}/datasets/${PRIVATE_ID}/settings`);
    assert.equal(refused?.status(), 404);
    await strangerContext.close();
  });

  it('lets an admin make a public dataset private from its settings, with a reason mailed to the owner, after which the gateway refuses it', async () => {
    const target = PUBLIC[11]!;
    const chunk = `/zarrproxy/${target.id}/zarr/index.json`;
    await server.deps.objects.put(`${target.id}/zarr/index.json`, '{"stores":[],"failures":[]}');
    assert.equal((await rawRequest(server.url, chunk)).status, 200);
    const context = await contextOf(admin.user);
    const page = await context.newPage();
    await page.goto(`${server.url}/datasets/${target.id}/settings`);
    const reasonField = page.locator('#visibility textarea[name=reason]');

    // Past 2,000 characters (the browser's maxlength taken off), with markup: refused, nothing changes, and what was
    // typed comes back as text in the field, not as markup in the page.
    const tooLong = `</textarea><b id="injected">taken over</b>${'x'.repeat(2000)}`;
    await reasonField.evaluate((el: HTMLTextAreaElement) => el.removeAttribute('maxlength'));
    await reasonField.fill(tooLong);
    await page.getByRole('button', { name: 'Make private' }).click();
    await page.waitForURL(/\/settings\/visibility$/);
    assert.match(await page.locator('.notice.error').innerText(), /not made private[\s\S]*Reason: at most 2,000 characters/);
    assert.equal(await page.locator('#injected').count(), 0, 'the reason typed became markup');
    assert.equal(await reasonField.inputValue(), tooLong);
    assert.equal((await server.deps.db.selectFrom('datasets').select('visibility').where('id', '=', target.id).executeTakeFirstOrThrow()).visibility, 'public');

    const reason = 'Consent forms do not cover <public> sharing & "reuse".\nAsk the ethics board, then request again.';
    await reasonField.fill(reason);
    await screenshot(page, 'settings-make-private.png');
    await page.getByRole('button', { name: 'Make private' }).click();
    await page.waitForURL(/private=1/);
    assert.match(await page.locator('#visibility').innerText(), /This dataset is private/);
    assert.equal((await server.deps.db.selectFrom('datasets').select('visibility').where('id', '=', target.id).executeTakeFirstOrThrow()).visibility, 'private');
    assert.equal((await rawRequest(server.url, chunk)).status, 404, 'dropped from the gateway at once');
    await context.close();

    // The owner is told, with the reason as typed (plain text: nothing escaped, the line break kept).
    const mails = (await mailsTo(server.dataDir, lab.user.email)).filter((m) => m.subject === `nds: an administrator made ${target.id} private`);
    assert.equal(mails.length, 1);
    assert.match(mails[0]!.text, /Their reason:\n\n {4}Consent forms do not cover <public> sharing & "reuse"\.\n {4}Ask the ethics board, then request again\./);

    const ownerContext = await contextOf(owner.user);
    const ownerPage = await ownerContext.newPage();
    await ownerPage.goto(`${server.url}/datasets/${PRIVATE_ID}/settings`);
    assert.equal(await ownerPage.getByRole('button', { name: 'Make private' }).count(), 0, 'not for owners');
    await ownerContext.close();
  });

  it('requests upload access from /account', async () => {
    const person = await createAccount(server, { status: 'verified' });
    const context = await contextOf(person.user);
    const page = await context.newPage();
    await page.goto(`${server.url}/account`);
    await page.getByRole('button', { name: 'Request upload access' }).click();
    await page.waitForURL(/requested=1/);
    assert.match(await page.locator('#upload-access').innerText(), /You asked for upload access on/);
    const user = await server.deps.db.selectFrom('users').select('upload_access_requested_at').where('id', '=', person.user.id).executeTakeFirstOrThrow();
    assert.ok(user.upload_access_requested_at);
    await context.close();
  });
});
