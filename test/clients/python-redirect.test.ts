/**
 * The Python client's API key goes to the server it belongs to only (decision 0021), never to a host a redirect
 * names: urllib copies a request's ordinary headers onto a redirect's, whatever host or scheme that names, so
 * a 302 from the server, a proxy or a hostile network on http sent `Authorization: Bearer <key>` elsewhere.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { runPython } from './support.js';


function listen(handler: http.RequestListener): Promise<http.Server> {
  return new Promise((resolve) => {
    const s = http.createServer(handler);
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

describe('the Python client and redirects to another host', () => {
  it('does not send the API key to the host a redirect names', async () => {
    const seen: Array<string | undefined> = [];
    // "Another host": another origin (port, and name: localhost vs 127.0.0.1), as a CDN or an attacker's host would be.
    const other = await listen((req, res) => {
      seen.push(req.headers.authorization);
      res.setHeader('content-type', 'application/json');
      res.end('{"recordings": [], "next_cursor": null}');
    });
    const nds = await listen((req, res) => {
      res.writeHead(302, { location: `http://localhost:${(other.address() as AddressInfo).port}${req.url}` });
      res.end();
    });
    try {
      const url = `http://127.0.0.1:${(nds.address() as AddressInfo).port}`;
      const run = await runPython(`from nds_client.client import Client\ntry:\n    Client(${JSON.stringify(url)}, api_key="nds_SECRET_KEY", retries=0).list_recordings()\nexcept Exception as e:\n    print("refused:", e)\n`);
      assert.equal(run.code, 0, run.stderr);
      assert.ok(!seen.some((h) => h?.includes('nds_SECRET_KEY')), `the other host received the API key: ${JSON.stringify(seen)}`);
    } finally {
      nds.close();
      other.close();
    }
  });
});
