/**
 * Every page of nds in a real Chromium under the Content-Security-Policy it is served with: each works (the
 * viewer draws its traces, the forms post) with no violation reported; `/account` and `/device` refuse to be
 * framed, by another site and by a page of the service's own origin, while the viewer's `?embed=1` renders
 * inside a frame. `NDS_TEST_SCREENSHOTS=<folder>` keeps a screenshot of each page there.
 */
// test.sh: embedded pass only. What this file checks happens in the browser or the docs, on routes whose
// database work the other tests run on PostgreSQL too; the second pass would repeat it at a browser's cost.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { SESSION_COOKIE } from '../../src/accounts/sessions.js';
import { createAccount, type TestAccount } from '../support/accounts.js';
import { latestMailTo } from '../support/outbox.js';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { fixturesDir } from '../formats/support/fixtures.js';
import { publishDataset } from './viewer-support.js';

const PUBLIC_ID = 'nd000901';
const PRIVATE_ID = 'nd000902';
const RECORDING = 'sub-01/eeg/sub-01_task-rest_eeg.zarr';
const fixture = path.join(fixturesDir, 'mne-python/brainvision/test.vhdr');
const shots = process.env.NDS_TEST_SCREENSHOTS;

/** What a page reported against its policy: `securitypolicyviolation` events and console messages. */
interface Watched {
  page: Page;
  violations(): Promise<string[]>;
}

describe('pages under their Content-Security-Policy, in chromium', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let owner: TestAccount;
  let setupLink: string;
  let signedIn: BrowserContext;
  let anonymous: BrowserContext;

  before(async () => {
    server = await startTestServer();
    // While the service has no owner it has a setup link; taken before any account exists.
    const opened = await server.deps.ownerSetup.open(server.deps.db);
    assert.ok(opened);
    setupLink = `${server.url}/setup?token=${opened.token}`;
    owner = await createAccount(server, { role: 'admin' });
    await publishDataset(server, { id: PUBLIC_ID, ownerId: owner.user.id, name: 'Policy test', recordings: [{ file: fixture, zarr: RECORDING }] });
    await publishDataset(server, { id: PRIVATE_ID, ownerId: owner.user.id, name: 'Private policy test', visibility: 'private', recordings: [{ file: fixture, zarr: RECORDING }] });
    browser = await sharedChromium();
    anonymous = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    signedIn = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const { createSession } = await import('../../src/accounts/sessions.js');
    const { token } = await createSession(server.deps.db, owner.user.id, server.clock.now());
    await signedIn.addCookies([{ name: SESSION_COOKIE, value: token, url: server.url, httpOnly: true, sameSite: 'Lax' }]);
    if (shots) mkdirSync(shots, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function watch(context: BrowserContext): Promise<Watched> {
    const page = await context.newPage();
    const console: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) console.push(m.text());
    });
    page.on('pageerror', (err) => console.push(`page error: ${err.message}`));
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} blocked ${e.blockedURI} (${e.sourceFile}:${e.lineNumber})`));
    });
    return {
      page,
      async violations() {
        const events = await page.evaluate(() => (window as unknown as { cspViolations?: string[] }).cspViolations ?? []);
        return [...events, ...console];
      },
    };
  }

  /** Opens `url`, waits for `ready`, and asserts the page reported nothing against its policy. */
  async function visit(context: BrowserContext, url: string, ready: string, name: string): Promise<Watched> {
    const watched = await watch(context);
    const answer = await watched.page.goto(url);
    assert.ok(answer, url);
    assert.match(answer.headers()['content-security-policy'] ?? '', /frame-ancestors/, `${url} is served with a policy`);
    await watched.page.waitForSelector(ready);
    await settle(watched.page);
    assert.deepEqual(await watched.violations(), [], `${url}: nothing reported against the policy`);
    await styled(watched.page, url);
    if (shots) await watched.page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
    return watched;
  }

  it('the watch sees what the policy refuses: inline script, inline style and a style attribute', async () => {
    // The same answer headers as a real page, around a body that breaks them: the checks below can fail.
    const policy = (await fetch(`${server.url}/login`)).headers.get('content-security-policy')!;
    const watched = await watch(anonymous);
    const at = `${server.url}/policy-probe`;
    await watched.page.route(at, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', headers: { 'content-security-policy': policy }, body: '<!doctype html><style>p{}</style><p style="color:red">x</p><script>window.ran = true</script>' }),
    );
    await watched.page.goto(at);
    await settle(watched.page);
    const reported = await watched.violations();
    assert.ok(reported.some((v) => v.startsWith('script-src')), reported.join('\n'));
    assert.ok(reported.some((v) => v.startsWith('style-src')), reported.join('\n'));
    assert.equal(await watched.page.evaluate(() => (window as unknown as { ran?: boolean }).ran), undefined, 'the inline script did not run');
    await watched.page.close();
  });

  it('home, search, sign-in, sign-up, account, device and the dataset list work with no violation', async () => {
    for (const [context, url, ready, name] of [
      [anonymous, '/', 'form.search', 'home'],
      [anonymous, '/?q=policy', 'ul.cards', 'search'],
      [anonymous, '/login', 'form[action="/auth/code/request"]', 'login'],
      [anonymous, '/signup', 'form', 'signup'],
      [signedIn, '/account', 'dl.facts', 'account'],
      [signedIn, '/device', 'form[action="/device"]', 'device'],
      [signedIn, '/datasets', 'table', 'datasets'],
      [signedIn, `/datasets/${PUBLIC_ID}/settings`, 'form', 'settings'],
    ] as const) {
      const { page } = await visit(context, `${server.url}${url}`, ready, name);
      await page.close();
    }
  });

  it('a device code approved on /device: the form posts under the policy', async () => {
    const started = await (await fetch(`${server.url}/auth/device/start`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ machine_name: 'csp-test' }) })).json();
    const { page, violations } = await visit(signedIn, `${server.url}/device?code=${started.user_code}`, 'form[action="/device/approve"]', 'device-code');
    await Promise.all([page.waitForURL(/result=approved/), page.click('form[action="/device/approve"] button')]);
    assert.deepEqual(await violations(), []);
    await page.close();
  });

  it("the viewer of a public and of a private dataset decodes its zstd chunks and draws its traces (gateway reads) with no violation, without 'unsafe-eval'", async () => {
    for (const [context, id, name] of [[anonymous, PUBLIC_ID, 'viewer'], [signedIn, PRIVATE_ID, 'viewer-private']] as const) {
      const { page } = await visit(context, `${server.url}/datasets/${id}`, '#nds-viewer[data-ready="true"]', name);
      assert.ok(await tracesDrawn(page), `${id}: traces on the canvas`);
      // The stricter policy: no code may be evaluated, and the chunks were still decoded (numcodecs' codec would
      // have been refused, "Evaluating a string as JavaScript violates…", and nothing drawn).
      const csp = (await page.evaluate(async () => (await fetch(location.href)).headers.get('content-security-policy'))) ?? '';
      assert.doesNotMatch(csp, /unsafe-eval/, csp);
      assert.ok(await page.evaluate(() => window.ndsViewer!.rows.some((r) => r.values.some((v) => Number.isFinite(v) && v !== 0))), 'decoded samples');
      await page.close();
    }
    const { page } = await visit(anonymous, `${server.url}/datasets/${PUBLIC_ID}?embed=1`, '#nds-viewer[data-ready="true"]', 'embed');
    assert.ok(await tracesDrawn(page));
    await page.close();
  });

  it('the setup link\'s page and form work under the policy', async () => {
    const context = await browser.newContext();
    const { page, violations } = await visit(context, setupLink, 'form[action="/setup"]', 'setup');
    await page.fill('input[name=username]', 'grace');
    await page.fill('input[name=email]', 'grace@example.org');
    const [answer] = await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    assert.equal(answer?.status(), 200, 'the own-Origin rule takes the post of a page under strict-origin');
    assert.match((await page.textContent('main')) ?? '', /Welcome, grace/);
    assert.deepEqual(await violations(), []);
    await context.close();
  });

  it('a key-regeneration link: its page, and the key its button shows, under the policy', async () => {
    const account = await createAccount(server, { status: 'verified' });
    server.clock.advance(16 * 60_000);
    await fetch(`${server.url}/auth/request-key-regeneration`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: account.user.email }) });
    const link = /(http\S+confirm-key-regeneration\?token=\S+)/.exec((await latestMailTo(server.dataDir, account.user.email)).text)![1]!;
    const context = await browser.newContext();
    const { page, violations } = await visit(context, link, 'form[action="/auth/confirm-key-regeneration"]', 'key-regeneration');
    await Promise.all([page.waitForSelector('#new-key'), page.click('form[action="/auth/confirm-key-regeneration"] button')]);
    assert.match((await page.textContent('#new-key')) ?? '', /^nds_/);
    assert.deepEqual(await violations(), []);
    await context.close();
  });

  /** A page that frames these paths of the service, without a policy of its own. */
  function framerHtml(paths: string[]): string {
    return `<!doctype html><title>framer</title>${paths.map((p, i) => `<iframe id="f${i}" src="${server.url}${p}" width="410" height="520"></iframe>`).join('')}`;
  }

  /** The framer as a page of the service's own origin (the test answers for that one URL). */
  async function sameOriginFramer(context: BrowserContext, paths: string[]): Promise<Page> {
    const page = await context.newPage();
    const at = `${server.url}/framing-test`;
    await page.route(at, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: framerHtml(paths) }));
    await page.goto(at);
    return page;
  }

  /**
   * The framer as another site: served by its own server at 127.0.0.1 (another origin and site than
   * localhost). A real local server, since chromium lets only a local page frame a local address.
   */
  async function otherSiteFramer(context: BrowserContext, paths: string[]): Promise<{ page: Page; close(): Promise<void> }> {
    const site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(framerHtml(paths)));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const page = await context.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
    return { page, close: () => new Promise((resolve) => site.close(() => resolve())) };
  }

  /** Whether the frame `#id` of a same-origin framer shows a document the framer can read, and its text. */
  function frameText(page: Page, id: string): Promise<string | null> {
    return page.evaluate((frameId) => {
      const frame = document.getElementById(frameId) as HTMLIFrameElement;
      try {
        return frame.contentDocument?.body?.innerText ?? null;
      } catch {
        return null;
      }
    }, id);
  }

  it('/account and /device refuse to be framed by a page of the service\'s own origin, which frames the embed viewer', async () => {
    const page = await sameOriginFramer(signedIn, ['/account', '/device', `/datasets/${PUBLIC_ID}?embed=1`]);
    const embed = page.frameLocator('#f2');
    await embed.locator('#nds-viewer[data-ready="true"]').waitFor();
    await settle(page);
    assert.match((await frameText(page, 'f2')) ?? '', /Montage/, 'the embedded viewer shows, readable by its own origin');
    for (const id of ['f0', 'f1']) {
      const text = await frameText(page, id);
      assert.ok(text === null || !text.includes(owner.user.username), `${id}: nothing of the account shows in the frame (got ${JSON.stringify(text?.slice(0, 80))})`);
      assert.ok(!(text ?? '').includes('Approve') && !(text ?? '').includes('Your account'), id);
    }
    const blocked = page.frames().filter((f) => f.url().startsWith('chrome-error:'));
    assert.equal(blocked.length, 2, `both refused: ${page.frames().map((f) => f.url()).join(' ')}`);
    if (shots) await page.screenshot({ path: path.join(shots, 'framed-same-origin.png') });
    await page.close();
  });

  it('another site cannot frame /account or /device, and may frame the embed viewer', async () => {
    const { page, close } = await otherSiteFramer(signedIn, ['/account', '/device', `/datasets/${PUBLIC_ID}?embed=1`]);
    // The embed renders: the framer can frame the service at all, so the refusals below are the headers'.
    await page.frameLocator('#f2').locator('#nds-viewer[data-ready="true"]').waitFor();
    const urls = page.frames().map((f) => f.url());
    assert.equal(urls.filter((u) => u.startsWith('chrome-error:')).length, 2, urls.join(' '));
    assert.ok(urls.some((u) => u.includes(`/datasets/${PUBLIC_ID}?embed=1`)), urls.join(' '));
    if (shots) await page.screenshot({ path: path.join(shots, 'framed-other-site.png') });
    await page.close();
    await close();
  });
});

/** Gives the page a moment for late reports: two animation frames after the network is idle. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('networkidle');
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}

/** The pages' style sheets applied: the header bar is laid out by nds.css, not the browser's defaults. */
async function styled(page: Page, url: string): Promise<void> {
  const font = await page.evaluate(() => getComputedStyle(document.body).fontFamily);
  assert.match(font, /system-ui/, `${url}: nds.css applied`);
}

/** Whether the viewer's trace canvas holds more than its background (pixels of several colours). */
function tracesDrawn(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('canvas.viewer-traces')!;
    const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
    const colours = new Set<number>();
    for (let i = 0; i < data.length && colours.size < 8; i += 4 * 97) colours.add((data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!);
    return colours.size >= 3;
  });
}
