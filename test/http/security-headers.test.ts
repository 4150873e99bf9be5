/**
 * The headers of every answer (docs/security.md, "Headers"): pages, the embeddable viewer, JSON and stored
 * objects, HSTS with an https PUBLIC_URL, and the gateway's own `nosniff`. How the pages behave under these
 * headers in a browser: test/web/security-headers.browser.test.ts.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { Hono } from 'hono';
import type { AppEnv } from '../../src/http/app-env.js';
import { dataOrigins, securityHeaders } from '../../src/http/security-headers.js';
import { createAccount } from '../support/accounts.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { fixturesDir } from '../formats/support/fixtures.js';
import { publishDataset } from '../web/viewer-support.js';

const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const ID = 'nd000951';

/** The directives of a Content-Security-Policy, by name. */
function directives(policy: string | null): Map<string, string> {
  assert.ok(policy, 'a Content-Security-Policy');
  return new Map(policy.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values.join(' ')]));
}

describe('security headers', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { ZARR_PUBLIC_BASE_URL: 'https://data.example.org/nds' } });
    const owner = await createAccount(server);
    await publishDataset(server, { id: ID, ownerId: owner.user.id, name: 'Headers', recordings: [{ file: path.join(fixturesDir, 'mne-python/brainvision/test.vhdr'), zarr: 'sub-01/eeg/sub-01_task-a_eeg.zarr' }] });
  });
  after(() => server?.close());

  const get = (p: string, headers: Record<string, string> = browser) => fetch(`${server.url}${p}`, { headers });

  it('a page runs only scripts and styles of its own origin, reads data from the gateway and public objects, and is never framed', async () => {
    for (const p of ['/', '/login', '/device', '/datasets', `/setup?token=x`, '/auth/confirm-key-regeneration?token=x']) {
      const res = await get(p);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/, p);
      const csp = directives(res.headers.get('content-security-policy'));
      assert.equal(csp.get('default-src'), "'self'", p);
      assert.equal(csp.get('script-src'), "'self'", `${p}: no inline script, no eval`);
      assert.equal(csp.get('style-src'), "'self'", `${p}: no inline style`);
      assert.equal(csp.get('connect-src'), `'self' ${server.url} https://data.example.org`, p);
      assert.equal(csp.get('frame-ancestors'), "'none'", p);
      assert.equal(csp.get('object-src'), "'none'", p);
      assert.equal(csp.get('base-uri'), "'none'", p);
      assert.equal(csp.get('form-action'), "'self'", p);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', p);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', p);
      assert.equal(res.headers.get('referrer-policy'), 'strict-origin', p);
      assert.equal(res.headers.get('strict-transport-security'), null, `${p}: no HSTS over http`);
    }
  });

  it("the viewer's pages evaluate no code (its zstd decoder is plain JavaScript); only ?embed=1 may be framed, by any site by default", async () => {
    const page = await get(`/datasets/${ID}`);
    const csp = directives(page.headers.get('content-security-policy'));
    assert.equal(csp.get('script-src'), "'self'", "no 'unsafe-eval', no 'wasm-unsafe-eval'");
    assert.equal(csp.get('style-src'), "'self'");
    assert.equal(csp.get('frame-ancestors'), "'none'");
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    const embed = await get(`/datasets/${ID}?embed=1`);
    assert.match(await embed.text(), /id="nds-viewer"/);
    const embedCsp = directives(embed.headers.get('content-security-policy'));
    assert.equal(embedCsp.get('frame-ancestors'), '*');
    assert.equal(embedCsp.get('script-src'), "'self'");
    assert.equal(embedCsp.get('style-src'), "'self'");
    assert.equal(embed.headers.get('x-frame-options'), null, 'X-Frame-Options cannot allow other sites: left out');
    // An unknown dataset's embed is a plain page, framed by nobody.
    const unknown = await get('/datasets/nd999999?embed=1');
    assert.equal(unknown.status, 404);
    assert.equal(directives(unknown.headers.get('content-security-policy')).get('frame-ancestors'), "'none'");
    assert.equal(unknown.headers.get('x-frame-options'), 'DENY');
  });

  it('JSON answers, assets and errors load and run nothing and are never framed', async () => {
    for (const [p, accept] of [['/datasets', 'application/json'], [`/datasets/${ID}`, 'application/json'], ['/assets/nds.css', '*/*'], ['/assets/viewer.css', '*/*'], ['/no-such-route', '*/*'], ['/datasets/nd999999', 'application/json']] as const) {
      const res = await get(p, { accept });
      assert.doesNotMatch(res.headers.get('content-type') ?? '', /html/, p);
      const csp = directives(res.headers.get('content-security-policy'));
      assert.equal(csp.get('default-src'), "'none'", p);
      assert.equal(csp.get('frame-ancestors'), "'none'", p);
      assert.ok(csp.has('sandbox'), p);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', p);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', p);
    }
  });

  it("the gateway's answers say nosniff, hits and refusals alike; its other headers are its own", async () => {
    const index = `/zarrproxy/${ID}/zarr/index.json`;
    for (let i = 0; i < 2; i++) {
      const res = await get(index, { accept: '*/*' });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-cache'), i === 0 ? 'MISS' : 'HIT');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('content-security-policy'), null, 'the gateway answers as nds gateway does alone');
    }
    const refused = await get('/zarrproxy/nd999999/zarr/index.json', { accept: '*/*' });
    assert.equal(refused.status, 404);
    assert.equal(refused.headers.get('x-content-type-options'), 'nosniff');
  });
});

describe('security headers of a service at an https address', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ env: { PUBLIC_URL: 'https://nds.example.org', VIEWER_FRAME_ANCESTORS: 'https://lab.example.org https://*.uni.example' } });
    const owner = await createAccount(server);
    await publishDataset(server, { id: ID, ownerId: owner.user.id, name: 'Headers', recordings: [{ file: path.join(fixturesDir, 'mne-python/brainvision/test.vhdr'), zarr: 'sub-01/eeg/sub-01_task-a_eeg.zarr' }] });
  });
  after(() => server?.close());

  it('sends HSTS on every answer, and frames the embed only for the listed sites', async () => {
    const local = `http://127.0.0.1:${server.port}`;
    for (const [p, accept] of [['/', browser.accept], ['/datasets', 'application/json']]) {
      const res = await fetch(`${local}${p}`, { headers: { accept } });
      assert.equal(res.headers.get('strict-transport-security'), 'max-age=31536000', p);
    }
    const embed = await fetch(`${local}/datasets/${ID}?embed=1`, { headers: browser });
    assert.match(await embed.text(), /id="nds-viewer"/);
    assert.equal(directives(embed.headers.get('content-security-policy')).get('frame-ancestors'), 'https://lab.example.org https://*.uni.example');
    assert.equal(directives((await fetch(`${local}/datasets/${ID}`, { headers: browser })).headers.get('content-security-policy')).get('frame-ancestors'), "'none'");
  });
});

describe('the headers middleware on its own', () => {
  // The folder store keeps no content type, but an S3 store serves the one its uploader gave.
  it("gives stored bytes served as HTML (/objects, /git) no page policy: sandboxed, they run nothing at the service's origin", async () => {
    const app = new Hono<AppEnv>();
    app.use(securityHeaders(loadConfig({})));
    app.get('*', (c) => c.html('<script>fetch("/account")</script>'));
    for (const p of ['/objects/nd000001/uploads/page.html', '/git/nd000001.git/page.html']) {
      const res = await app.request(p);
      const csp = directives(res.headers.get('content-security-policy'));
      assert.equal(csp.get('default-src'), "'none'", p);
      assert.ok(csp.has('sandbox'), p);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', p);
    }
    assert.equal(directives((await app.request('/account')).headers.get('content-security-policy')).get('default-src'), "'self'", 'a page elsewhere');
  });
});

describe('VIEWER_FRAME_ANCESTORS and the data origins', () => {
  it('takes *, origins with a wildcard host, or none alone; refuses anything else by name', () => {
    assert.deepEqual(loadConfig({}).viewerFrameAncestors, ['*']);
    assert.deepEqual(loadConfig({ VIEWER_FRAME_ANCESTORS: "'none'" }).viewerFrameAncestors, ["'none'"]);
    assert.deepEqual(loadConfig({ VIEWER_FRAME_ANCESTORS: "'self', https://a.example:8443" }).viewerFrameAncestors, ["'self'", 'https://a.example:8443']);
    for (const bad of ['javascript:alert(1)', "https://a.example 'unsafe-inline'", "'none' https://a.example", 'https://a.example/path', 'https://a.example; script-src *']) {
      assert.throws(() => loadConfig({ VIEWER_FRAME_ANCESTORS: bad }), (err: unknown) => err instanceof ConfigError && err.setting === 'VIEWER_FRAME_ANCESTORS', bad);
    }
  });

  it('names the gateway and the public objects once each', () => {
    assert.deepEqual(dataOrigins({ zarrCacheBaseUrl: 'https://nds.example.org/zarrproxy', zarrPublicBaseUrl: undefined }), ['https://nds.example.org']);
    assert.deepEqual(dataOrigins({ zarrCacheBaseUrl: 'https://zarr.example.org', zarrPublicBaseUrl: 'https://zarr.example.org/objects' }), ['https://zarr.example.org']);
    assert.deepEqual(dataOrigins({ zarrCacheBaseUrl: 'https://cdn.example.net/z', zarrPublicBaseUrl: 'https://bucket.s3.example.com' }), ['https://cdn.example.net', 'https://bucket.s3.example.com']);
  });
});

describe('answers to signed-in requests', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.close());

  it('are private to their caller, so no shared cache keeps a private dataset for someone else', async () => {
    const owner = await createAccount(server);
    const { insertDatasetRows } = await import('../support/datasets.js');
    await insertDatasetRows(server.deps.db, [
      { id: 'nd000961', name: 'private one', owner_id: owner.user.id, visibility: 'private' },
      { id: 'nd000962', name: 'public one', owner_id: owner.user.id, visibility: 'public' },
    ]);
    for (const p of ['/datasets/nd000961', '/datasets/nd000961/versions', '/datasets/nd000961/members', '/users/me', '/users/me/storage']) {
      const res = await owner.api(p);
      assert.equal(res.status, 200, p);
      assert.equal(res.headers.get('cache-control'), 'private', p);
    }
    // Anonymous answers are the same for everyone: a cache may keep those.
    const anonymous = await fetch(`${server.url}/datasets/nd000962`);
    assert.equal(anonymous.status, 200);
    assert.equal(anonymous.headers.get('cache-control'), null);
  });
});
