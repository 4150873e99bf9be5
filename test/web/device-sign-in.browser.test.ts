/**
 * The whole device sign-in as a person does it: a real Chromium signs in on /login with a mailed code, and
 * approves (or denies) on /device the code that `nds auth login`, running as a child process, printed.
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startNds } from '../support/cli.js';
import { signInCodeFor } from '../support/outbox.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('device sign-in in a real browser', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let page: Page;
  let configHome: string;
  let env: Record<string, string>;
  const username = `ada-${process.pid}`;
  const email = `${username}@example.org`;

  before(async () => {
    server = await startTestServer({ env: { DEVICE_POLL_INTERVAL_S: '1' } });
    browser = await sharedChromium();
    page = await browser.newPage();
    configHome = await mkdtemp(path.join(os.tmpdir(), 'nds-browser-'));
    env = { NDS_API_URL: server.url, XDG_CONFIG_HOME: configHome };
  });
  after(async () => {
    await browser?.close();
    await server.close();
    await rm(configHome, { recursive: true, force: true });
  });

  it('signs up on /signup with a mailed code, without JavaScript help', async () => {
    await page.goto(`${server.url}/signup`);
    await page.fill('input[name=username]', username);
    await page.fill('input[name=email]', email);
    await page.click('button[type=submit]');
    await page.waitForURL(/\/login\?step=code/);
    await page.fill('input[name=code]', await signInCodeFor(server.dataDir, email));
    await page.click('form[action="/auth/code/verify"] button');
    await page.waitForURL(/\/account$/);
    assert.match(await page.textContent('main') ?? '', new RegExp(username));
  });

  it('approves the code of `nds auth login` on /device; the CLI prints the signed-in username', async () => {
    const run = startNds(['auth', 'login'], env);
    const [, link] = await run.stderrMatch(/(http:\/\/\S+\/device\?code=\S+)/);
    await page.goto(link);
    assert.match(await page.textContent('main') ?? '', new RegExp(os.hostname().slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.match(await page.textContent('dl.facts') ?? '', new RegExp(username));
    await page.click('form[action="/device/approve"] button');
    await page.waitForURL(/result=approved/);
    const r = await run.done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `signed in as ${username}\n`);
    const stored = JSON.parse(await readFile(path.join(configHome, 'nds', 'credentials.json'), 'utf8'));
    const me = await fetch(`${server.url}/users/me`, { headers: { authorization: `Bearer ${stored.api_key}` } });
    assert.equal((await me.json()).username, username);

    await page.goto(`${server.url}/account`);
    assert.match(await page.textContent('table') ?? '', /device: /);
  });

  it('a code typed on /device and denied makes `nds auth login` fail with the server\'s message', async () => {
    const run = startNds(['auth', 'login'], { ...env, XDG_CONFIG_HOME: path.join(configHome, 'denied') });
    const [, code] = await run.stderrMatch(/Your code: (\S+)/);
    await page.goto(`${server.url}/device`);
    await page.fill('input[name=code]', code.toLowerCase().replace('-', ''));
    await page.click('form[action="/device"] button');
    await page.click('form[action="/device/deny"] button');
    await page.waitForURL(/result=denied/);
    const r = await run.done;
    assert.equal(r.code, 1);
    assert.match(r.stderr, /nds: That sign-in was declined in the browser\. \(device_code_denied\)\n$/);
  });
});
