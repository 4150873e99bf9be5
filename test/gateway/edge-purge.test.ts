import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { edgePurger, purgeUrls } from '../../src/gateway/edge-purge.js';
import { createLogger } from '../../src/core/log.js';

describe('edge purge client', () => {
  let cdn: Server;
  let base: string;
  const calls: Array<{ path: string; auth: string | undefined; files: string[] }> = [];
  let failNext = false;

  before(async () => {
    // A stand-in for the CDN's purge API, speaking its protocol.
    cdn = createServer((req, res) => {
      let text = '';
      req.on('data', (c) => (text += c));
      req.on('end', () => {
        calls.push({ path: req.url!, auth: req.headers.authorization, files: JSON.parse(text).files });
        res.writeHead(failNext ? 500 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ success: !failNext }));
      });
    });
    await new Promise<void>((r) => cdn.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(cdn.address() as { port: number }).port}/client/v4`;
  });
  after(() => new Promise<void>((r) => cdn.close(() => r())));

  const logLines: string[] = [];
  const log = createLogger('info', new Writable({ write: (c, _e, done) => (logLines.push(String(c)), done()) }));
  const config = (over: Record<string, string | undefined> = {}) => ({
    edgeApiBase: base,
    edgeApiToken: 'tok',
    edgeZoneId: 'z1',
    zarrCacheBaseUrl: 'https://zarr.example.org',
    ...over,
  });

  it('posts absolute URLs in batches of at most 30 with the bearer token', async () => {
    calls.length = 0;
    const paths = ['index.json', ...Array.from({ length: 64 }, (_, i) => `s${i}.zarr/zarr.json`)];
    await edgePurger({ config: config(), log })('nd000001', paths);
    assert.deepEqual(calls.map((c) => c.files.length), [30, 30, 5]);
    assert.ok(calls.every((c) => c.path === '/client/v4/zones/z1/purge_cache' && c.auth === 'Bearer tok'));
    assert.equal(calls[0]!.files[0], 'https://zarr.example.org/nd000001/zarr/index.json');
  });

  it('does nothing without a token or a zone', async () => {
    calls.length = 0;
    await edgePurger({ config: config({ edgeApiToken: undefined }), log })('nd000001', ['index.json']);
    await edgePurger({ config: config({ edgeZoneId: undefined }), log })('nd000001', ['index.json']);
    assert.equal(calls.length, 0);
  });

  it('logs a refused or unreachable purge and never throws', async () => {
    failNext = true;
    logLines.length = 0;
    await edgePurger({ config: config(), log })('nd000001', ['index.json']);
    failNext = false;
    await edgePurger({ config: config({ edgeApiBase: 'http://127.0.0.1:1' }), log })('nd000001', ['index.json']);
    assert.ok(logLines.some((l) => l.includes('edge purge refused')));
    assert.ok(logLines.some((l) => l.includes('edge purge failed')));
  });

  it('percent-encodes each path segment of the URLs', () => {
    assert.deepEqual(purgeUrls('https://z.example', 'nd000001', ['a b.zarr/zarr.json']), ['https://z.example/nd000001/zarr/a%20b.zarr/zarr.json']);
  });
});
