/**
 * Seed §4 gateway rule 6 in a real browser: a page on an allowed origin reads a store's zarr.json with a
 * Range through the gateway (206, ETag and Content-Range readable by script); a page on a foreign origin
 * cannot read index.json.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { sharedChromium, type ChromiumLease } from '../support/chromium.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { insertDataset, newDatasetId, putZarrCopy, STORE } from './support.js';

function pageServer(host: string): Promise<Server> {
  const s = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>viewer stand-in</title>');
  });
  return new Promise((resolve) => s.listen(0, host, () => resolve(s)));
}

const portOf = (s: Server) => (s.address() as { port: number }).port;

describe('gateway in a browser', () => {
  let server: TestServer;
  let browser: ChromiumLease;
  let allowed: Server;
  let foreign: Server;
  let id: string;
  let zarrJson: string;

  before(async () => {
    server = await startTestServer({ env: { SERVICE_DOMAIN: 'nds.example.org' } });
    id = newDatasetId();
    await insertDataset(server.deps.db, id);
    ({ zarrJson } = await putZarrCopy(server.deps.objects, id));
    allowed = await pageServer('127.0.0.1');
    foreign = await pageServer('127.0.0.2');
    browser = await sharedChromium();
  });
  after(async () => {
    await browser?.close();
    allowed?.close();
    foreign?.close();
    await server?.close();
  });

  // The gateway is on 127.0.0.1, the pages on other origins, so every read is cross-origin.
  const gatewayUrl = (path: string) => `http://127.0.0.1:${server.port}/zarrproxy/${id}/zarr/${path}`;

  it('lets a page on an allowed origin read a ranged zarr.json with ETag and Content-Range', async () => {
    const page = await browser.newPage();
    await page.goto(`http://localhost:${portOf(allowed)}/`);
    const got = await page.evaluate(async (url) => {
      const r = await fetch(url, { headers: { Range: 'bytes=0-9' } });
      return { status: r.status, etag: r.headers.get('etag'), contentRange: r.headers.get('content-range'), length: r.headers.get('content-length'), text: await r.text() };
    }, gatewayUrl(`${STORE}/zarr.json`));
    assert.equal(got.status, 206);
    assert.match(String(got.etag), /^"/);
    assert.equal(got.contentRange, `bytes 0-9/${Buffer.byteLength(zarrJson)}`);
    assert.equal(got.length, '10');
    assert.equal(got.text, zarrJson.slice(0, 10));
    await page.close();
  });

  it('keeps a page on a foreign origin from reading index.json', async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.2:${portOf(foreign)}/`);
    const outcome = await page.evaluate(async (url) => {
      try {
        const r = await fetch(url);
        return `read ${r.status}`;
      } catch (err) {
        return `blocked: ${(err as Error).message}`;
      }
    }, gatewayUrl('index.json'));
    assert.match(outcome, /^blocked/);
    // The same request from the allowed origin succeeds, so the refusal is CORS and not a broken URL.
    await page.goto(`http://localhost:${portOf(allowed)}/`);
    const ok = await page.evaluate(async (url) => (await fetch(url)).status, gatewayUrl('index.json'));
    assert.equal(ok, 200);
    await page.close();
  });
});
